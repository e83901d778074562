import Hummingbird
import Logging
import NIOCore
import Persistence

/// A list response written as its rows are read, so that what one response holds in memory
/// is a batch of rows, however long their texts (up to ``TextLimit``) and however slowly
/// the client reads: the IDs of the window are read first, then the rows ``batchSize`` at a
/// time, each batch loaded, encoded and written before the next is read (a write waits while
/// the connection's buffer is full). A page of at most two batches (the default limit's)
/// that skips no rows is read whole with its IDs instead, in one statement (``Rows``), and
/// sent in one piece with its `Content-Length`.
///
/// The body is the JSON a whole page encoded with sorted keys would be; `next` is the
/// cursor that continues after the page's last row (`after=…`), `null` when the page is not
/// full; a page at an offset also says the offset and how many rows match in all:
///
/// ```json
/// {"items":[{"id":1,…},{"id":2,…}],"limit":2,"next":"2","offset":0,"total":4}
/// {"items":[{"id":3,…},{"id":4,…}],"limit":2,"next":"4"}
/// ```
///
/// A row deleted, or changed so that it no longer matches the list's filters, between the
/// two reads is left out (``PublicationRepository`` loads each batch with the filters). The
/// batches are loaded once the head is sent, as the client reads, not all at once when
/// the request arrives (which would hold every waiting response's first batch in memory
/// together); should one fail, the error is logged and the connection closed before the
/// body is whole, which a client sees as a cut-off response rather than a short list. (The
/// count and the IDs are read before the head: a store that cannot be read at all is an
/// ordinary error answer.)
///
/// Written by hand rather than returned as an `Encodable` page for Hummingbird to encode:
/// a `ResponseEncoder` makes the whole body at once, after every row is read (a long list's
/// rows would all be in memory together), and Hummingbird's through `JSONEncoder`, which
/// ``JSONWritable`` is there to avoid.
struct ListResponseBody<Item: JSONWritable & Sendable>: ResponseGenerator, Sendable {
    /// Rows per batch: a tenth of the longest list.
    static var batchSize: Int { 10 }

    /// Where the page starts.
    enum Window: Sendable {
        /// At an offset; `total` rows match in all.
        case offset(Int, total: Int)
        /// After a cursor.
        case keyset
    }

    /// The window's rows, in the list's order.
    enum Rows: Sendable {
        /// Read whole with the IDs: a short page.
        case read([Item])
        /// The IDs, and how a batch of them is read: the items in their order, rows gone
        /// since left out.
        case inBatches(ids: [ObjectID], load: @Sendable ([ObjectID]) async throws -> [Item])
    }

    let rows: Rows
    let window: Window
    let limit: Int
    /// The cursor after the page's last row; `nil` when the page is not full.
    let next: String?

    /// The page as the answer to `request`: ``response(logger:)`` with the request's logger.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        try response(logger: context.logger)
    }

    /// A 200 with the page: a page read whole is written in one piece with its length (one
    /// write for head, body and end, where a streamed body costs a write for each); a page
    /// read in batches is written batch by batch. `logger` is the request's.
    func response(logger: Logger) throws -> Response {
        let headers: HTTPFields = [.contentType: ContentType.json]
        switch rows {
        case .read(let items):
            // Room for the usual row from the start, rather than growing the buffer a few
            // times over as the page is written.
            var buffer = ByteBufferAllocator().buffer(capacity: 64 + 256 * items.count)
            writeOpening(into: &buffer)
            var isFirst = true
            try append(items, to: &buffer, isFirst: &isFirst)
            writeClosing(into: &buffer)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: buffer))
        case .inBatches(let ids, let load):
            return Response(
                status: .ok,
                headers: headers,
                body: ResponseBody { writer in
                    try await write(ids, load: load, to: &writer, logger: logger)
                }
            )
        }
    }

    private func write(
        _ ids: [ObjectID],
        load: @Sendable ([ObjectID]) async throws -> [Item],
        to writer: inout any ResponseBodyWriter,
        logger: Logger
    ) async throws {
        var buffer = ByteBuffer()
        writeOpening(into: &buffer)
        var isFirst = true
        for start in stride(from: 0, to: ids.count, by: Self.batchSize) {
            let batch: [Item]
            do {
                batch = try await load(Array(ids[start..<min(start + Self.batchSize, ids.count)]))
            } catch {
                // The store failed us: an error of ours. A client that went away is not
                // (the writes below throw then), and is left to the connection's own logging.
                logger.error("list response cut off", metadata: ["error": "\(String(reflecting: error))"])
                throw error
            }
            try append(batch, to: &buffer, isFirst: &isFirst)
            if buffer.readableBytes > 0 {
                try await writer.write(buffer)
                buffer = ByteBuffer()
            }
        }
        writeClosing(into: &buffer)
        try await writer.write(buffer)
        try await writer.finish(nil)
    }

    private func writeOpening(into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"items\":[")
    }

    /// The items, each after a comma but the list's first (`isFirst`: none written yet).
    private func append(_ items: [Item], to buffer: inout ByteBuffer, isFirst: inout Bool) throws {
        for item in items {
            if !isFirst { buffer.writeStaticString(",") }
            try item.writeJSON(into: &buffer)
            isFirst = false
        }
    }

    private func writeClosing(into buffer: inout ByteBuffer) {
        buffer.writeString("],\"limit\":\(limit),\"next\":")
        JSONText.write(next, into: &buffer)
        if case .offset(let offset, let total) = window { buffer.writeString(",\"offset\":\(offset),\"total\":\(total)") }
        buffer.writeStaticString("}")
    }
}
