import HTTPTypes
import Hummingbird

/// The request context of the BookStore service: Hummingbird's core context with the
/// request's id, the service's body limit and its JSON encoder.
public struct BookStoreRequestContext: RequestContext {
    /// Hummingbird's own part of the context.
    public var coreContext: CoreRequestContextStorage
    /// The request's id (`RequestIDMiddleware` sets it), also on the logger's lines.
    public var requestID = ""

    /// The context of a request arriving on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }

    /// Bodies over 1 MiB are refused with 413: no resource of the service comes near it.
    public var maxUploadSize: Int { RequestBodyReader.maximumSize }

    /// How the handlers' `ResponseEncodable` results are written: JSON with sorted keys.
    public var responseEncoder: JSONResponseEncoder { JSONResponseEncoder() }
}
