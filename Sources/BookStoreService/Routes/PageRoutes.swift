import HTTPTypes
import Hummingbird

/// `/publications/{id}/pages` and `/pages/{id}`: a publication's pages, and each page.
struct PageRoutes: Sendable {
    let gate: StoreGate

    func add(to table: inout RouteTable) {
        table.add(.get, "/publications/{id}/pages") { request, context in
            let query = try ListQuery.pages(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
            return try await repository().pages(of: try PublicationRoutes.id(context), query).response(logger: context.logger)
        }
        table.add(.post, "/publications/{id}/pages") { request, context in
            let publicationID = try PublicationRoutes.id(context)
            let repository = try repository()
            _ = try await repository.publication(publicationID)
            let input = try PageInput(try await RequestBodyReader.object(from: request, context: context))
            let created = try await repository.createPage(in: publicationID, input)
            var response = try Response.json(created, status: .created)
            response.headers[.location] = "/pages/\(created.id)"
            return response
        }
        table.add(.get, "/pages/{id}") { request, context in
            try .json(try await repository().page(try PublicationRoutes.id(context, name: "page")))
        }
        table.add(.patch, "/pages/{id}") { request, context in
            let id = try PublicationRoutes.id(context, name: "page")
            let repository = try repository()
            _ = try await repository.page(id)
            let input = try PageInput(try await RequestBodyReader.object(from: request, context: context))
            return try .json(try await repository.updatePage(id, input))
        }
        table.add(.delete, "/pages/{id}") { request, context in
            try await repository().deletePage(try PublicationRoutes.id(context, name: "page"))
            return Response(status: .noContent)
        }
    }

    private func repository() throws -> PublicationRepository {
        PublicationRepository(container: try gate.container())
    }
}
