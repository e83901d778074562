import Foundation
import Hummingbird
import NIOCore
import Testing

@testable import BookStoreService

/// The service writes publications and pages by hand (``JSONWritable``) for speed; the
/// bytes are those `JSONEncoder` writes with the service's options, for every value a
/// resource can hold: texts with quotes, backslashes, slashes, every control character,
/// non-ASCII and emoji, empty and NULL; prices with cents, whole, tiny, huge, negative and
/// negative zero; keys at both ends of their range.
@Suite("hand-written JSON")
struct JSONWritableTests {
    /// A small deterministic generator, so a failure names values that can be tried again.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    static let pieces =
        ["", "a", "Zoë", "\"", "\\", "/", "</script>", "\u{7F}", "é", "日本語", "😀", "👩‍👩‍👧", "\u{2028}", "\u{FEFF}", " ", "Generated book 17"]
        + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
    static let numbers: [Double] = [
        0, -0.0, 1, 22, 10.99, 12.5, 0.1, 1e-7, 123456.78, 1e15, 1e16, 1.5e300, -3.25, 99999.99,
        PublicationResource.floatPrecision(10.99), PublicationResource.floatPrecision(1234.56),
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.0001, 0.00001, 9_007_199_254_740_992, 1e21,
    ]

    static func text(_ generator: inout Generator) -> String {
        (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    static func optionalText(_ generator: inout Generator) -> String? {
        Bool.random(using: &generator) ? nil : text(&generator)
    }

    static func expectSameBytes(_ value: some JSONWritable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var buffer = ByteBuffer()
        try value.writeJSON(into: &buffer)
        let encoded = try Response.jsonEncoder().encode(value)
        // Bytes, not strings: String's == takes canonically equivalent texts as equal.
        #expect(
            Array(buffer.readableBytesView) == Array(encoded),
            "\(String(buffer: buffer)) against \(String(decoding: encoded, as: UTF8.self))",
            sourceLocation: sourceLocation
        )
    }

    @Test func publicationsAreWrittenAsTheEncoderWritesThem() throws {
        var generator = Generator(state: 29)
        for round in 0..<3_000 {
            let price =
                round < Self.numbers.count
                ? Self.numbers[round]
                : round.isMultiple(of: 2)
                    ? PublicationResource.floatPrecision(Double.random(in: 0...1_000, using: &generator))
                    : Double.random(in: -1e6...1e6, using: &generator) * pow(10, Double(Int.random(in: -12...12, using: &generator)))
            let publication = PublicationResource(
                id: [Int64.max, Int64.min, 0, 1, Int64.random(in: 1...10_000_000, using: &generator)].randomElement(using: &generator)!,
                title: Self.text(&generator),
                price: price,
                firstName: Self.optionalText(&generator),
                lastName: Self.optionalText(&generator),
                synopsis: Self.optionalText(&generator),
                pageCount: Int.random(in: 0...5_000, using: &generator)
            )
            try Self.expectSameBytes(publication)
        }
    }

    /// A price that is not a number is refused as the encoder refuses it (an error answer,
    /// not `nan` in a 200).
    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNumberThatIsNotFiniteIsRefused(price: Double) throws {
        let publication = PublicationResource(id: 1, title: "x", price: price, firstName: nil, lastName: nil, synopsis: nil, pageCount: 0)
        var buffer = ByteBuffer()
        #expect(throws: EncodingError.self) { try publication.writeJSON(into: &buffer) }
        #expect(throws: EncodingError.self) { try Response.jsonEncoder().encode(publication) }
    }

    @Test func pagesAreWrittenAsTheEncoderWritesThem() throws {
        var generator = Generator(state: 31)
        for _ in 0..<3_000 {
            let page = PageResource(
                id: Int64.random(in: 1...Int64.max, using: &generator),
                number: Int64.random(in: -5...30_000, using: &generator),
                text: Self.optionalText(&generator),
                publicationId: Bool.random(using: &generator) ? nil : Int64.random(in: 1...1_000_000, using: &generator)
            )
            try Self.expectSameBytes(page)
        }
    }
}
