import Foundation
import HTTPTypes
import Hummingbird

/// Reads a JSON request body as an object of fields, refusing what the service does not
/// take: a wrong content type (415), more than 1 MiB (413), text that is not JSON or not
/// a JSON object (400).
///
/// ```swift
/// let fields = try await RequestBodyReader.object(from: request, context: context)
/// ```
enum RequestBodyReader {
    static let maximumSize = 1 << 20

    /// The media types a write takes; PATCH also takes JSON merge patches (RFC 7396).
    static func acceptedTypes(for method: HTTPRequest.Method) -> [String] {
        method == .patch ? ["application/json", "application/merge-patch+json"] : ["application/json"]
    }

    static func object(from request: Request, context: some RequestContext) async throws -> [String: JSONValue] {
        let accepted = acceptedTypes(for: request.method)
        let mediaType = request.headers[.contentType].map(Self.mediaType)
        guard let mediaType, accepted.contains(mediaType) else {
            throw Problem(
                .unsupportedMediaType,
                type: .unsupportedMediaType,
                title: "Unsupported content type",
                detail: mediaType.map { "the body is \($0); send \(accepted.joined(separator: " or "))" }
                    ?? "the request has no Content-Type; send \(accepted.joined(separator: " or "))",
                headers: [.accept: accepted.joined(separator: ", ")]
            )
        }
        // A declared length over the limit is refused before reading a byte of it.
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumSize {
            throw tooLarge
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumSize)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch let error as HTTPError {
            throw error
        } catch {
            // The client went away or was too slow (the request clock closed the
            // connection): its fault, not the service's, and nobody reads the answer.
            throw Problem(
                .badRequest,
                type: .invalidBody,
                title: "The request body was cut off",
                detail: "the connection ended before the whole body was received"
            )
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Data(buffer.readableBytesView))
        } catch {
            throw Problem.invalidBody(buffer.readableBytes == 0 ? "the body is empty; send a JSON object" : "the body is not valid JSON: \(error)")
        }
        guard let object = value.objectValue else {
            throw Problem.invalidBody("the body is \(value.kindName); send a JSON object")
        }
        return object
    }

    private static var tooLarge: Problem {
        Problem(
            .contentTooLarge,
            type: .bodyTooLarge,
            title: "The request body is too large",
            detail: "bodies of at most \(maximumSize) bytes (1 MiB) are accepted"
        )
    }

    /// `application/json; charset=utf-8` → `application/json`.
    private static func mediaType(_ header: String) -> String {
        header.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    }
}
