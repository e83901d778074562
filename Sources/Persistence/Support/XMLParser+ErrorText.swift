import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

extension XMLParser {
    /// What a parser error says, in words. FoundationXML on Linux gives errors without a
    /// description, only libxml2's code; ``XMLParser/ErrorCode`` there numbers its cases
    /// otherwise (libxml2's 4, a document without XML, is its `prematureDocumentEndError`),
    /// so the words go by libxml2's numbers.
    static func describe(_ error: Error?) -> String {
        guard let error else { return "the parser stopped without saying why" }
        let code = (error as NSError).code
        return errorWords[code] ?? "the parser stopped at something it names only by its number, \(code); look at the XML there"
    }

    /// Words for a parse of `bytes` that failed at `line`: the error's, or, when the document
    /// ends before its root element is closed, that it looks cut off.
    ///
    /// libxml2 reports a file that ends too early as whatever it expected next (an
    /// attribute's value, a '>', the end of the document), so the end of the file is what
    /// tells a cut-off file from one that is wrong in the middle.
    ///
    /// - Parameters:
    ///   - root: the root element's name, `model` or `database`.
    ///   - rootClosed: whether the parser saw the root element's end tag.
    static func describeFailure(_ error: Error?, in bytes: [UInt8], line: Int, root: String, rootClosed: Bool) -> (words: String, isCutOff: Bool) {
        let code = error.map { ($0 as NSError).code }
        if code == XMLErrorCode.documentEnd, rootClosed {
            return ("there is more after the </\(root)> that ends the document; a document has one root element and nothing after it", false)
        }
        // What the parser expected next says nothing more than where the file stops.
        guard looksCutOff(bytes, at: line, root: root, code: code) else { return (describe(error), false) }
        return (cutOffWords(root: root), true)
    }

    /// What a cut-off document is said to be.
    static func cutOffWords(root: String) -> String {
        "it ends before its </\(root)>, as a file that was cut off does"
    }

    /// Whether a problem at `line` is the document ending too early: it is on the document's
    /// last line, and the document does not end with its root element's end tag.
    ///
    /// - Parameter code: the parser's error code; `nil` for a problem a delegate found, in
    ///   the start tag libxml2 hands over, attributes missing, when a file ends inside it.
    static func looksCutOff(_ bytes: [UInt8], at line: Int, root: String, code: Int?) -> Bool {
        let content = bytes.reversed().drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        // The line of the last byte that is not white space: where a cut-off file stops.
        let lastLine = 1 + content.count { $0 == 0x0A }
        return !content.isEmpty && line >= lastLine
            && code != XMLErrorCode.documentEmpty  // the file does not begin with XML at all
            && !content.starts(with: "</\(root)>".utf8.reversed())
            // Cut after a whole tag, the parser finds the document unfinished; another
            // problem there is about that tag.
            && (content.first != UInt8(ascii: ">") || code == XMLErrorCode.documentEnd)
    }
}

/// libxml2's error codes that need a name in code (`xmlParserErrors` in `libxml/xmlerror.h`).
private enum XMLErrorCode {
    /// `XML_ERR_DOCUMENT_EMPTY`: no '<' where the document should begin.
    static let documentEmpty = 4
    /// `XML_ERR_DOCUMENT_END`: the document is unfinished, or goes on after its root element.
    static let documentEnd = 5
}

/// Every error libxml2 reports when parsing a document, in words, by its code
/// (`xmlParserErrors` in `libxml/xmlerror.h`).
private let errorWords: [Int: String] = [
    1: "the parser could not go on, usually after bytes it cannot read as text",
    2: "the parser ran out of memory",
    3: "the document does not start with XML",
    4: "the file holds no XML: it is empty, or it does not begin with '<'",
    5: "the document does not end where it should: an element is not closed, or there is something after the last one",
    6: "a character reference &#x…; is not a hexadecimal number",
    7: "a character reference &#…; is not a decimal number",
    8: "a character reference names a character XML does not allow",
    9: "there is a character XML does not allow, or bytes that are not UTF-8",
    10: "the file ends inside a character reference (&#…;)",
    11: "a character reference (&#…;) stands before the root element",
    12: "a character reference (&#…;) stands after the root element",
    13: "a character reference (&#…;) stands in the document type declaration",
    14: "the file ends inside an entity reference (&…;)",
    15: "an entity reference (&…;) stands before the root element",
    16: "an entity reference (&…;) stands after the root element",
    17: "an entity reference (&…;) stands in the document type declaration",
    18: "the file ends inside a parameter entity reference (%…;)",
    19: "a parameter entity reference (%…;) stands before the root element",
    20: "a parameter entity reference (%…;) stands after the root element",
    21: "a parameter entity reference (%…;) stands inside a declaration",
    22: "an '&' is not followed by a name; write &amp; for an ampersand",
    23: "an entity reference has no ';' at its end; write &amp; for an ampersand",
    24: "a '%' in the document type declaration is not followed by a name",
    25: "a parameter entity reference has no ';' at its end",
    26: "an entity reference names an entity that is not defined; only &amp; &lt; &gt; &quot; &apos; and &#…; are",
    27: "an entity reference names an entity that is not defined; only &amp; &lt; &gt; &quot; &apos; and &#…; are",
    28: "an entity reference names an unparsed entity",
    29: "an attribute value refers to an external entity",
    30: "a parameter entity is used outside the document type declaration",
    31: "the file's encoding is unknown; save it as UTF-8",
    32: "the file's encoding is not supported; save it as UTF-8",
    33: "a quoted string has no opening quote",
    34: "a quoted string is not closed",
    35: "a namespace declaration is wrong",
    36: "an <!ENTITY> declaration has no value",
    37: "an <!ENTITY> declaration is not closed",
    38: "there is a '<' inside an attribute value: its closing quote may be missing, or write &lt;",
    39: "an attribute value is not in quotes",
    40: "an attribute value has no closing quote",
    41: "an attribute has no value; write name=\"value\"",
    42: "an attribute is given twice in one element",
    43: "a literal in the document type declaration has no opening quote",
    44: "a literal in the document type declaration is not closed",
    45: "a comment is not closed with -->",
    46: "a processing instruction (<?…?>) has no name",
    47: "a processing instruction (<?…?>) is not closed with ?>",
    48: "a <!NOTATION> declaration is malformed",
    49: "a <!NOTATION> declaration is not closed",
    50: "an <!ATTLIST> declaration is malformed",
    51: "an <!ATTLIST> declaration is not closed",
    52: "an <!ELEMENT> declaration's mixed content is malformed",
    53: "an <!ELEMENT> declaration's mixed content is not closed",
    54: "an <!ELEMENT> declaration's content is malformed",
    55: "an <!ELEMENT> declaration's content is not closed",
    56: "the XML declaration (<?xml …?>) is malformed",
    57: "the XML declaration (<?xml …?>) is not closed with ?>, or holds something it may not",
    58: "a conditional section is malformed",
    59: "a conditional section is not closed",
    60: "the external part of the document type declaration is not closed",
    61: "the document type declaration (<!DOCTYPE …>) is not closed",
    62: "']]>' stands in text, where it is not allowed",
    63: "a CDATA section is not closed with ]]>",
    64: "an XML declaration (<?xml …?>) stands after the start of the file; it must come first",
    65: "a space is missing, e.g. between two attributes",
    66: "a separator is missing in a declaration",
    67: "a name token is missing in a declaration",
    68: "a '<' or '&' is not followed by a name; write &lt; or &amp; for the characters themselves",
    69: "text is missing in a declaration",
    70: "a URI is missing in a declaration",
    71: "a public identifier is missing in a declaration",
    72: "a '<' is missing where an element should start",
    73: "a tag is not closed with '>'",
    74: "an end tag ('</…>') is missing",
    75: "an attribute's name is not followed by '='",
    76: "an end tag does not match its start tag",
    77: "an element is not closed",
    78: "standalone in the XML declaration is neither 'yes' nor 'no'",
    79: "the encoding named in the XML declaration is malformed",
    80: "a comment holds '--', which XML does not allow",
    81: "there are bytes that are not valid in the file's encoding",
    82: "a standalone document uses an external entity",
    83: "a conditional section is invalid",
    84: "an entity declaration has no value",
    85: "the elements are not balanced: an end tag is missing or there is one too many",
    86: "there is more after the root element; a document has one root element",
    87: "an entity's value holds a character XML does not allow",
    88: "a parameter entity reference stands inside a markup declaration",
    89: "entities refer to themselves or expand too much (the <!ENTITY> definitions of a DOCTYPE); a model file needs none",
    90: "an entity's text starts or ends an element that the entity does not close or open",
    91: "a URI is invalid",
    92: "a URI has a fragment (#…), which is not allowed there",
    94: "the document has no document type declaration",
    95: "a conditional section's keyword is neither INCLUDE nor IGNORE",
    96: "the XML declaration (<?xml …?>) has no version",
    101: "the document has no encoding declaration",
    103: "a standalone document needs a declaration it does not have",
    104: "an entity could not be processed",
    105: "a notation could not be processed",
    108: "the XML declaration names a version other than 1.0",
    109: "the XML declaration names a version other than 1.0",
    110: "a name is longer than the parser reads",
    111: "the parse was stopped",
    200: "the xml: namespace prefix is used wrongly",
    201: "a namespace prefix (prefix:name) is not declared",
    202: "a qualified name (prefix:name) is malformed",
    203: "an attribute is given twice in one element, under two prefixes of one namespace",
    204: "a namespace is declared with an empty name",
    205: "a name holds more than one ':'",
]
