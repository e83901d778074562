import HTTPTypes
import Hummingbird

/// `/publications` and `/publications/{id}`: list, create, read, replace, update, delete.
struct PublicationRoutes: Sendable {
    typealias Context = BookStoreRequestContext

    let gate: StoreGate

    /// The routes, relative to where they are added (`/publications`).
    var endpoints: RouteCollection<Context> {
        RouteCollection(context: Context.self)
            .get(use: list)
            .post(use: create)
            .get("{id}", use: read)
            .put("{id}") { request, context in try await update(request, context, replacing: true) }
            .patch("{id}") { request, context in try await update(request, context, replacing: false) }
            .delete("{id}", use: delete)
    }

    /// `GET /publications`: a page of the list, as the query asks (``ListQuery``).
    func list(_ request: Request, context: Context) async throws -> ListResponseBody<PublicationResource> {
        let query = try ListQuery.publications(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
        return try await repository().publications(query)
    }

    /// `POST /publications`: a 201 with the publication made and its `Location`.
    func create(_ request: Request, context: Context) async throws -> EditedResponse<PublicationResource> {
        let input = try PublicationInput(try await RequestBodyReader.object(from: request, context: context))
        let created = try await repository().createPublication(input)
        return EditedResponse(status: .created, headers: [.location: "/publications/\(created.id)"], response: created)
    }

    /// `GET /publications/{id}`.
    func read(_ request: Request, context: Context) async throws -> PublicationResource {
        try await repository().publication(try Self.id(context))
    }

    /// `PUT` (`replacing`: the fields left out get the model's defaults) or `PATCH`
    /// (they are left as they are) `/publications/{id}`.
    private func update(_ request: Request, _ context: Context, replacing: Bool) async throws -> PublicationResource {
        let id = try Self.id(context)
        let repository = try repository()
        // An unknown id is a 404 whatever the body, so look it up before reading the body.
        _ = try await repository.publication(id)
        let input = try PublicationInput(try await RequestBodyReader.object(from: request, context: context))
        return try await repository.updatePublication(id, input, replacing: replacing)
    }

    /// `DELETE /publications/{id}`: 204; its pages go with it.
    func delete(_ request: Request, context: Context) async throws -> HTTPResponse.Status {
        try await repository().deletePublication(try Self.id(context))
        return .noContent
    }

    private func repository() throws -> PublicationRepository {
        PublicationRepository(container: try gate.container())
    }

    /// The `{id}` of the path; one that is not a key of any row is a 404 like a missing row,
    /// and so is one not written as the service writes it (`+1`, `01`): one resource, one path.
    ///
    /// Not Hummingbird's `context.parameters.require("id", as: Int64.self)`: it takes `+1`
    /// and `01` for 1, and answers any other text with a 400 ("Parameter 'abc' can not be
    /// converted to the expected type (Int64)") where the API says no such resource exists.
    static func id(_ context: Context, name: String = "publication") throws -> Int64 {
        guard let text = context.parameters.get("id"), let id = Int64(text), id > 0, String(id) == text else {
            throw Problem.notFound("there is no \(name) with id \(context.parameters.get("id") ?? "")")
        }
        return id
    }
}
