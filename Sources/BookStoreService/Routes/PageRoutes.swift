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

    func list(_ request: Request, context: Context) async throws -> Response {
        let query = try ListQuery.pages(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
        return try await repository().pages(of: try PublicationRoutes.id(context), query).response(logger: context.logger)
    }

    func create(_ request: Request, context: Context) async throws -> Response {
        let publicationID = try PublicationRoutes.id(context)
        let repository = try repository()
        _ = try await repository.publication(publicationID)
        let input = try PageInput(try await RequestBodyReader.object(from: request, context: context))
        let created = try await repository.createPage(in: publicationID, input)
        var response = try Response.json(created, status: .created)
        response.headers[.location] = "/pages/\(created.id)"
        return response
    }

    func read(_ request: Request, context: Context) async throws -> Response {
        try .json(try await repository().page(try Self.id(context)))
    }

    func update(_ request: Request, context: Context) async throws -> Response {
        let id = try Self.id(context)
        let repository = try repository()
        _ = try await repository.page(id)
        let input = try PageInput(try await RequestBodyReader.object(from: request, context: context))
        return try .json(try await repository.updatePage(id, input))
    }

    func delete(_ request: Request, context: Context) async throws -> Response {
        try await repository().deletePage(try Self.id(context))
        return Response(status: .noContent)
    }

    /// The `{id}` of `/pages/{id}`, as ``PublicationRoutes/id(_:name:)`` reads it.
    private static func id(_ context: Context) throws -> Int64 {
        try PublicationRoutes.id(context, name: "page")
    }

    private func repository() throws -> PublicationRepository {
        PublicationRepository(container: try gate.container())
    }
}
