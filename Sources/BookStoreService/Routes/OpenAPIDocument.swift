import HTTPTypes
import Hummingbird
import Persistence

/// The OpenAPI 3.1 document of the API, served at `/openapi.json`.
///
/// Written by hand, next to the routes; `OpenAPITests` exercises every operation it lists
/// and checks each response against it, and checks that it lists exactly the router's
/// routes (``BookStoreService/routes``), so the two cannot drift apart unnoticed.
enum OpenAPIDocument {
    /// The route that serves the document of a service with `writeAccess` (where writes
    /// need a key, its write operations declare the bearer scheme and their 401), relative
    /// to the root.
    static func endpoints(writeAccess: WriteAccess, servesMetrics: Bool) -> RouteCollection<BookStoreRequestContext> {
        let served = document(writeAccess: writeAccess, servesMetrics: servesMetrics)
        return RouteCollection(context: BookStoreRequestContext.self)
            .get("openapi.json") { _, _ in served }
    }

    /// The document of a service with `writeAccess`, listing `/metrics` where it serves them.
    static func document(writeAccess: WriteAccess, servesMetrics: Bool) -> JSONValue {
        let base = writeAccess.requiresKey ? documentWithWriteKeys : document
        return servesMetrics ? addingMetrics(to: base) : base
    }

    /// `document` with `GET /metrics`, for a service configured with ``ServiceMetrics``.
    static func addingMetrics(to document: JSONValue) -> JSONValue {
        guard case .object(var root) = document, case .object(var paths) = root["paths"] ?? .null else { return document }
        paths["/metrics"] = [
            "get": [
                "operationId": "metrics",
                "summary":
                    "Requests by route, method and status with their durations, the store's state and connections, and a running migration's progress, in Prometheus' text format",
                "responses": ["200": ["description": "The metrics", "content": ["text/plain": ["schema": ["type": "string"]]]]],
            ]
        ]
        root["paths"] = .object(paths)
        return .object(root)
    }

    /// ``document`` with the bearer scheme (`writeKey`) required by every operation that
    /// is not a read, each of which may then answer 401.
    static let documentWithWriteKeys: JSONValue = {
        guard case .object(var root) = document, case .object(var paths) = root["paths"] ?? .null,
            case .object(var components) = root["components"] ?? .null
        else { return document }
        for (path, item) in paths {
            guard case .object(var operations) = item else { continue }
            for (method, operation) in operations where ["post", "put", "patch", "delete"].contains(method) {
                guard case .object(var members) = operation, case .object(var responses) = members["responses"] ?? .null else { continue }
                members["security"] = [["writeKey": []]]
                responses["401"] = [
                    "description": "No write key was sent, or not one of the service's: nothing was written",
                    "headers": ["WWW-Authenticate": ["description": "The bearer challenge (RFC 6750)", "schema": ["type": "string"]]],
                    "content": ["application/problem+json": ["schema": ref("Problem")]],
                ]
                members["responses"] = .object(responses)
                operations[method] = .object(members)
            }
            paths[path] = .object(operations)
        }
        components["securitySchemes"] = [
            "writeKey": [
                "type": "http", "scheme": "bearer",
                "description": "One of the service's write keys (its --write-key-file); reads need none",
            ]
        ]
        root["paths"] = .object(paths)
        root["components"] = .object(components)
        return .object(root)
    }()

    static let document: JSONValue = [
        "openapi": "3.1.0",
        "info": [
            "title": "BookStore",
            "version": "5",
            "description":
                "Publications and their pages, in a store of the BookStore 5 model. Every refusal is application/problem+json (RFC 9457). While the store is migrated on start-up, data operations answer 503 with Retry-After and the migration's progress.",
        ],
        "paths": [
            "/publications": [
                "get": operation(
                    "listPublications",
                    "List publications",
                    parameters: listParameters(sortFields: ListQuery.publicationSortFields) + publicationFilters,
                    responses: [
                        "200": json("PublicationList", "A page of publications"),
                        "400": problem("A query parameter is unknown, repeated or does not parse"),
                        "404": problem("after names no place in the list: no such publication, or a cursor of another order"),
                    ]
                ),
                "post": operation(
                    "createPublication",
                    "Create a publication",
                    body: "PublicationInput",
                    responses: [
                        "201": created("Publication"), "400": problem("The body is not a publication"), "413": problem("The body is over 1 MiB"),
                        "415": problem("The body is not application/json"), "422": problem("The publication breaks the model's rules"),
                    ]
                ),
            ],
            "/publications/{id}": [
                "parameters": [idParameter("publication")],
                "get": operation(
                    "getPublication",
                    "Read a publication",
                    responses: ["200": json("Publication", "The publication"), "404": problem("There is no such publication")]
                ),
                "put": operation(
                    "replacePublication",
                    "Replace a publication's fields (fields left out get the model's defaults)",
                    body: "PublicationInput",
                    responses: writeResponses("Publication")
                ),
                "patch": operation(
                    "updatePublication",
                    "Change some of a publication's fields (a JSON merge patch)",
                    body: "PublicationPatch",
                    mergePatch: true,
                    responses: writeResponses("Publication")
                ),
                "delete": operation(
                    "deletePublication",
                    "Delete a publication and, as the model's cascade rule says, its pages",
                    responses: [
                        "204": ["description": "Deleted"], "404": problem("There is no such publication"),
                        "409": problem("The publication was changed meanwhile"),
                    ]
                ),
            ],
            "/publications/{id}/pages": [
                "parameters": [idParameter("publication")],
                "get": operation(
                    "listPages",
                    "List a publication's pages",
                    parameters: listParameters(sortFields: ListQuery.pageSortFields),
                    responses: [
                        "200": json("PageList", "A page of pages"), "400": problem("A query parameter is unknown, repeated or does not parse"),
                        "404": problem("There is no such publication, or after names no place in its pages"),
                    ]
                ),
                "post": operation(
                    "createPage",
                    "Add a page to a publication (without a number it becomes the next page)",
                    body: "PageInput",
                    responses: [
                        "201": created("Page"), "400": problem("The body is not a page"), "404": problem("There is no such publication"),
                        "413": problem("The body is over 1 MiB"), "415": problem("The body is not application/json"),
                        "422": problem("The page breaks the model's rules"),
                    ]
                ),
            ],
            "/pages/{id}": [
                "parameters": [idParameter("page")],
                "get": operation("getPage", "Read a page", responses: ["200": json("Page", "The page"), "404": problem("There is no such page")]),
                "patch": operation(
                    "updatePage",
                    "Change some of a page's fields (a JSON merge patch)",
                    body: "PageInput",
                    mergePatch: true,
                    responses: writeResponses("Page")
                ),
                "delete": operation(
                    "deletePage",
                    "Delete a page",
                    responses: [
                        "204": ["description": "Deleted"], "404": problem("There is no such page"), "409": problem("The page was changed meanwhile"),
                    ]
                ),
            ],
            "/health": [
                "get": [
                    "operationId": "health", "summary": "Whether the store is open and current; during a start-up migration, its progress",
                    "responses": [
                        "200": ["description": "Ready", "content": ["application/json": ["schema": ref("Health")]]],
                        "503": [
                            "description":
                                "Starting, migrating, waiting for a migration, outdated (another process migrated the store to another release: the next one, or an earlier one after a rollback), or stopping",
                            "headers": ["Retry-After": retryAfter], "content": ["application/json": ["schema": ref("Health")]],
                        ],
                    ],
                ]
            ],
            "/status": [
                "get": [
                    "operationId": "statusPage", "summary": "An HTML page with the store's state and a migration progress bar that updates itself",
                    "responses": ["200": ["description": "The page", "content": ["text/html": ["schema": ["type": "string"]]]]],
                ]
            ],
            "/openapi.json": [
                "get": [
                    "operationId": "openAPI", "summary": "This document",
                    "responses": ["200": ["description": "The OpenAPI document", "content": ["application/json": ["schema": ["type": "object"]]]]],
                ]
            ],
        ],
        "components": [
            "schemas": schemas
        ],
    ]

    // MARK: Building blocks

    private static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }

    private static let retryAfter: JSONValue = ["description": "Seconds to wait before retrying", "schema": ["type": "integer"]]

    private static func json(_ schema: String, _ description: String) -> JSONValue {
        ["description": .string(description), "content": ["application/json": ["schema": ref(schema)]]]
    }

    private static func created(_ schema: String) -> JSONValue {
        [
            "description": "Created", "headers": ["Location": ["description": "The new resource's path", "schema": ["type": "string"]]],
            "content": ["application/json": ["schema": ref(schema)]],
        ]
    }

    private static func problem(_ description: String) -> JSONValue {
        ["description": .string(description), "content": ["application/problem+json": ["schema": ref("Problem")]]]
    }

    private static func writeResponses(_ schema: String) -> [String: JSONValue] {
        [
            "200": json(schema, "The changed resource"), "400": problem("The body is not valid for this resource"),
            "404": problem("There is no such resource"), "409": problem("The resource was changed meanwhile"),
            "413": problem("The body is over 1 MiB"), "415": problem("The body is not JSON"), "422": problem("The change breaks the model's rules"),
        ]
    }

    /// An operation on the store: every one of them may answer 503 while the store is
    /// migrated, with Retry-After.
    private static func operation(
        _ id: String,
        _ summary: String,
        parameters: [JSONValue] = [],
        body: String? = nil,
        mergePatch: Bool = false,
        responses: [String: JSONValue]
    ) -> JSONValue {
        var responses = responses
        responses["503"] = [
            "description":
                "The store is being migrated (or opened); the body has the migration's progress. Or the store cannot be used (read-only, damaged, its server going down): nothing was saved",
            "headers": ["Retry-After": retryAfter], "content": ["application/problem+json": ["schema": ref("Problem")]],
        ]
        responses["507"] = problem("The disk that holds the store is full: nothing was saved")
        var operation: [String: JSONValue] = ["operationId": .string(id), "summary": .string(summary), "responses": .object(responses)]
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
        if let body {
            var content: [String: JSONValue] = ["application/json": ["schema": ref(body)]]
            if mergePatch { content["application/merge-patch+json"] = ["schema": ref(body)] }
            operation["requestBody"] = ["required": true, "content": .object(content)]
        }
        return .object(operation)
    }

    private static func idParameter(_ resource: String) -> JSONValue {
        ["name": "id", "in": "path", "required": true, "description": .string("The \(resource)'s id"), "schema": ["type": "integer", "minimum": 1]]
    }

    private static func query(_ name: String, _ description: String, _ schema: JSONValue) -> JSONValue {
        ["name": .string(name), "in": "query", "required": false, "description": .string(description), "schema": schema]
    }

    /// The window and order of a list, as ``ListQuery`` checks them: `sort` is a comma-separated
    /// list of the sort fields, each optionally prefixed with '-'.
    private static func listParameters(sortFields: [ListQuery.SortField]) -> [JSONValue] {
        let names = sortFields.map(\.name)
        let term = "-?(" + names.joined(separator: "|") + ")"
        return [
            query(
                "limit",
                "How many items to return",
                [
                    "type": "integer", "minimum": 1, "maximum": .number(Double(ListQuery.maximumLimit)),
                    "default": .number(Double(ListQuery.defaultLimit)),
                ]
            ),
            query(
                "offset",
                "How many matching items to skip (after the place after names, with it)",
                ["type": "integer", "minimum": 0, "maximum": .number(Double(ListQuery.maximumOffset)), "default": 0]
            ),
            query(
                "after",
                "Continue after the page whose next this is, or after the row with this id (a keyset page: no rows are skipped one by one; with the same sort and filters). An id that names no row, or a cursor of another order, is a 404",
                ["type": "string", "pattern": .string(ListCursor.pattern), "maxLength": .number(Double(TextLimit.cursor))]
            ),
            query(
                "sort",
                "Comma-separated fields to sort by, each optionally prefixed with '-' for descending: \(names.joined(separator: ", "))",
                ["type": "string", "pattern": .string("^\(term)(,\(term))*$"), "maxLength": .number(Double(TextLimit.filter))]
            ),
        ]
    }

    private static let publicationFilters: [JSONValue] = [
        query("q", "Publications whose title contains this text, ignoring case", text(TextLimit.filter)),
        query("lastName", "Publications whose author's last name is this, ignoring case", text(TextLimit.filter)),
        query("minPrice", "Publications costing at least this", ["type": "number"]),
        query("maxPrice", "Publications costing at most this; below minPrice, the range matches nothing", ["type": "number"]),
    ]

    private static let nullableString: JSONValue = ["type": ["string", "null"]]

    /// A text of at most `maxLength` characters, without NUL (U+0000), which no field keeps.
    /// For what a client sends: rows stored before these limits, or by another program, may
    /// hold more, so what the service answers is not bounded.
    private static func text(_ maxLength: Int, nullable: Bool = false) -> JSONValue {
        ["type": nullable ? ["string", "null"] : "string", "maxLength": .number(Double(maxLength)), "pattern": "^[^\\u0000]*$"]
    }
    private static let price: JSONValue = ["type": "number", "minimum": 0, "maximum": 1000]

    private static let writablePublicationFields: JSONValue = [
        "title": text(TextLimit.title), "price": price, "firstName": text(TextLimit.name, nullable: true),
        "lastName": text(TextLimit.name, nullable: true), "synopsis": text(TextLimit.synopsis, nullable: true),
    ]

    private static let schemas: JSONValue = [
        "Publication": [
            "type": "object", "additionalProperties": false,
            "required": ["id", "title", "price", "firstName", "lastName", "synopsis", "pageCount"],
            "properties": [
                "id": ["type": "integer", "minimum": 1, "readOnly": true], "title": ["type": "string"], "price": price,
                "firstName": nullableString, "lastName": nullableString, "synopsis": nullableString,
                "pageCount": ["type": "integer", "minimum": 0, "readOnly": true],
            ],
        ],
        "PublicationInput": [
            "type": "object", "additionalProperties": false, "required": ["title"],
            "description": "A publication's writable fields; those left out get the model's defaults (price 0, the others null).",
            "properties": writablePublicationFields,
        ],
        "PublicationPatch": [
            "type": "object", "additionalProperties": false,
            "description": "The fields to change; null empties an optional field.",
            "properties": writablePublicationFields,
        ],
        "PublicationList": list("Publication"),
        "Page": [
            "type": "object", "additionalProperties": false, "required": ["id", "number", "text", "publicationId"],
            "properties": [
                "id": ["type": "integer", "minimum": 1, "readOnly": true], "number": ["type": "integer", "minimum": -32768, "maximum": 32767],
                "text": nullableString, "publicationId": ["type": ["integer", "null"], "readOnly": true],
            ],
        ],
        "PageInput": [
            "type": "object", "additionalProperties": false,
            "properties": ["number": ["type": "integer", "minimum": -32768, "maximum": 32767], "text": text(TextLimit.pageText, nullable: true)],
        ],
        "PageList": list("Page"),
        "Problem": [
            "type": "object", "additionalProperties": false, "required": ["type", "title", "status", "detail"],
            "description": "RFC 9457 problem details.",
            "properties": [
                "type": ["type": "string"], "title": ["type": "string"], "status": ["type": "integer", "minimum": 400, "maximum": 599],
                "detail": ["type": "string"],
                "errors": [
                    "type": "array", "description": "One entry per field (or query parameter) at fault",
                    "items": [
                        "type": "object", "additionalProperties": false, "required": ["field", "code", "message"],
                        "properties": ["field": ["type": "string"], "code": ["type": "string"], "message": ["type": "string"]],
                    ],
                ],
                "migration": ref("MigrationProgress"),
            ],
        ],
        "MigrationProgress": [
            "type": "object", "additionalProperties": false,
            "required": [
                "step", "stepCount", "sourceVersion", "destinationVersion", "stage", "entityMapping", "entity", "instancesDone", "instancesTotal",
                "percent", "fractionCompleted", "stepFractionCompleted", "elapsedSeconds", "estimatedSecondsRemaining",
            ],
            "properties": migrationProperties,
        ],
        "Health": [
            "type": "object", "additionalProperties": false, "required": ["status", "model", "store"],
            "properties": .object(healthProperties),
        ],
    ]

    private static let migrationProperties: JSONValue = [
        "step": ["type": "integer", "minimum": 1], "stepCount": ["type": "integer", "minimum": 1],
        "sourceVersion": ["type": "string"], "destinationVersion": ["type": "string"],
        "stage": ["type": "string", "enum": .array(MigrationProgress.Stage.allCases.map { .string($0.rawValue) })],
        "entityMapping": nullableString, "entity": nullableString,
        "instancesDone": ["type": "integer", "minimum": 0], "instancesTotal": ["type": "integer", "minimum": 0],
        "percent": ["type": "integer", "minimum": 0, "maximum": 100],
        "fractionCompleted": [
            "type": "number", "minimum": 0, "maximum": 1,
            "description": "Each step weighed by the rows it reads and the passes it makes over them (in place 1, set-based 2, streamed 3)",
        ],
        "stepFractionCompleted": ["type": "number", "minimum": 0, "maximum": 1, "description": "The current step's own fraction done"],
        "elapsedSeconds": ["type": "integer", "minimum": 0, "description": "Seconds since the migration started"],
        "estimatedSecondsRemaining": [
            "type": ["integer", "null"], "minimum": 0,
            "description": "Seconds the rest should take at the current step's rate; null until there is a rate",
        ],
    ]

    private static var healthProperties: [String: JSONValue] {
        var properties = migrationProperties.objectValue ?? [:]
        properties["status"] = ["type": "string", "enum": ["ok", "starting", "migrating", "waiting", "outdated", "stopping"]]
        properties["model"] = ["type": "string"]
        properties["store"] = ["type": "string", "enum": ["sqlite", "postgres", "memory"]]
        properties["storeVersion"] = ["type": "string", "description": "While waiting for another process to migrate the store: its version"]
        properties["reason"] = ["type": "string", "description": "Once outdated: the version the store was migrated to, and what to do"]
        return properties
    }

    private static func list(_ item: String) -> JSONValue {
        [
            "type": "object", "additionalProperties": false, "required": ["items", "limit", "next"],
            "description":
                "A page of the list. A page at an offset also has offset and total; a keyset page (after) has neither: counting every match would read them all.",
            "properties": [
                "items": ["type": "array", "items": ref(item)],
                "total": ["type": "integer", "minimum": 0, "description": "How many items match in all (pages at an offset)"],
                "limit": ["type": "integer", "minimum": 1, "maximum": .number(Double(ListQuery.maximumLimit))],
                "offset": ["type": "integer", "minimum": 0, "description": "Where the page starts (pages at an offset)"],
                "next": ["type": ["string", "null"], "description": "Pass as after for the page that follows; null when this page is not full"],
            ],
        ]
    }
}
