import HTTPTypes
import Hummingbird
import Persistence

extension Problem {
    /// The problem a domain error is to a client: the model's validation is a 422 listing
    /// each field, an unknown object a 404, a concurrent change or a uniqueness constraint's clash a 409, a store that cannot be
    /// reached a 503, a full disk a 507 and a store that cannot be used (read-only, damaged,
    /// its server going down, migrated to another release since the service opened it (the next one, or an earlier one after a rollback)) a 503; `nil` for errors that are the service's own fault
    /// (answered with 500).
    ///
    /// ```swift
    /// Problem(domainError: ValidationError(...))?.status   // .unprocessableContent
    /// ```
    init?(domainError error: any Error) {
        switch error {
        case let problem as Problem:
            self = problem
        case let error as ValidationError:
            let entity = error.issues.first?.entity.lowercased() ?? "object"
            self.init(
                .unprocessableContent,
                type: .validationFailed,
                title: "The \(entity) breaks the model's rules",
                detail: error.issues.map(\.message).joined(separator: "; "),
                errors: error.issues.map { .init(field: $0.key ?? $0.entity, code: $0.code.rawValue, message: $0.message) }
            )
        case let error as ConstraintConflictError:
            self.init(
                .conflict,
                type: .conflict,
                title: "Another resource has these values",
                detail: error.conflicts.map(\.description).joined(separator: "; ")
            )
        case let error as StoreError where error.code == .objectNotFound:
            self = .notFound(error.message)
        case let error as StoreError where error.code == .conflict:
            self.init(
                .conflict,
                type: .conflict,
                title: "The resource was changed meanwhile",
                detail: "another request changed it since it was read; read it again and retry"
            )
        case let error as StoreError where error.code == .migratedSinceOpened:
            self.init(
                .serviceUnavailable,
                type: .storeUnusable,
                title: "The store was migrated to another release",
                detail: "nothing was saved: \(error.message); \(error.hint ?? "deploy the release that runs the store's version")"
            )
        case let error as StoreError where error.code == .connectionFailed:
            self.init(
                .serviceUnavailable,
                type: .unavailable,
                title: "The store cannot be reached",
                detail: "the database server does not answer; retry later",
                headers: [.retryAfter: "5"]
            )
        case let error where StorageFault(error) != nil:
            self.init(storageFault: StorageFault(error) ?? .inputOutput)
        case let error as HTTPError:
            self.init(httpError: error.status, detail: error.body)
        case let error as any HTTPResponseError:
            self.init(httpError: error.status, detail: nil)
        default:
            return nil
        }
    }

    /// A fault around the store: a full disk is a 507; a server going down or out of
    /// resources a 503 worth retrying; a store that cannot be used otherwise a 503 that needs
    /// its operator first. Nothing was saved in any case.
    private init(storageFault fault: StorageFault) {
        switch fault {
        case .diskFull:
            self.init(
                .init(code: 507, reasonPhrase: "Insufficient Storage"),
                type: .insufficientStorage,
                title: "The store's disk is full",
                detail: "nothing was saved: the disk that holds the store is full; retry once space has been freed"
            )
        case .serverUnavailable, .serverResources:
            self.init(
                .serviceUnavailable,
                type: .unavailable,
                title: "The store cannot be reached",
                detail: "nothing was saved: \(fault); retry later",
                headers: [.retryAfter: "5"]
            )
        case .notWritable, .damaged, .inputOutput, .cannotOpen, .clientLibrary:
            self.init(
                .serviceUnavailable,
                type: .storeUnusable,
                title: "The store cannot be used",
                detail: "nothing was saved: \(fault); the operator must fix this before a retry can succeed"
            )
        }
    }

    /// Hummingbird's own refusals (a body over the limit, an unmatched route) in the
    /// service's shape.
    private init(httpError status: HTTPResponse.Status, detail: String?) {
        switch status {
        case .contentTooLarge:
            self.init(
                status,
                type: .bodyTooLarge,
                title: "The request body is too large",
                detail: detail ?? "bodies of at most \(RequestBodyReader.maximumSize) bytes (1 MiB) are accepted"
            )
        case .notFound:
            self = .notFound(detail ?? "there is no resource here")
        default:
            self.init(status, type: .generic, title: status.reasonPhrase, detail: detail ?? status.reasonPhrase)
        }
    }

    /// A 500 that says no more than that: the log has the error, under the request's id.
    static func internalError(requestID: String) -> Problem {
        Problem(
            .internalServerError,
            type: .internalError,
            title: "Internal server error",
            detail: "the service failed to answer; the log has the details under request id \(requestID)"
        )
    }
}
