import Persistence

/// BookStore's domain: its model versions, seeding and typed records.
public enum BookStore {}
