extension ManagedObjectModel {
    /// Checks names, parents, destinations and inverses.
    func validate(declaredOrder: [EntityDescription]) throws(ModelError) {
        // Filled in by the model loader work.
    }
}
