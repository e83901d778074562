import Testing
@testable import BookStore
