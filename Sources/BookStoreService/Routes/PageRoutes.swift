import HTTPTypes
import Hummingbird

/// `/publications/{id}/pages` and `/pages/{id}`: a publication's pages, and each page.
struct PageRoutes: Sendable {
    typealias Context = BookStoreRequestContext

    let gate: StoreGate

    /// The routes, relative to the root.
    var endpoints: RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.group("publications/{id}/pages")
            .get(use: list)
            .post(use: create)
        routes.group("pages/{id}")
            .get(use: read)
            .patch(use: update)
            .delete(use: delete)
        return routes
    }

    /// `GET /publications/{id}/pages`: a page of the publication's pages.
    func list(_ request: Request, context: Context) async throws -> ListResponseBody<PageResource> {
        let query = try ListQuery.pages(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
        return try await repository().pages(of: try PublicationRoutes.id(context), query)
    }

    /// `POST /publications/{id}/pages`: a 201 with the page made and its `Location`.
    func create(_ request: Request, context: Context) async throws -> EditedResponse<PageResource> {
        let publicationID = try PublicationRoutes.id(context)
        let repository = try repository()
        _ = try await repository.publication(publicationID)
        let input = try PageInput(try await RequestBodyReader.object(from: request, context: context))
        let created = try await repository.createPage(in: publicationID, input)
        return EditedResponse(status: .created, headers: [.location: "/pages/\(created.id)"], response: created)
    }

    /// `GET /pages/{id}`.
    func read(_ request: Request, context: Context) async throws -> PageResource {
        try await repository().page(try Self.id(context))
    }

    /// `PATCH /pages/{id}`.
    func update(_ request: Request, context: Context) async throws -> PageResource {
        let id = try Self.id(context)
        let repository = try repository()
        _ = try await repository.page(id)
        let input = try PageInput(try await RequestBodyReader.object(from: request, context: context))
        return try await repository.updatePage(id, input)
    }

    /// `DELETE /pages/{id}`: 204.
    func delete(_ request: Request, context: Context) async throws -> HTTPResponse.Status {
        try await repository().deletePage(try Self.id(context))
        return .noContent
    }

    /// The `{id}` of `/pages/{id}`, as ``PublicationRoutes/id(_:name:)`` reads it.
    private static func id(_ context: Context) throws -> Int64 {
        try PublicationRoutes.id(context, name: "page")
    }

    private func repository() throws -> PublicationRepository {
        PublicationRepository(container: try gate.container())
    }
}
