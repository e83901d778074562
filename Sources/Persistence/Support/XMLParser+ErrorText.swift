import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

extension XMLParser {
    /// FoundationXML on Linux gives errors without a description, so name the common codes.
    static func describe(_ error: Error?) -> String {
        guard let error else { return "unknown parser error" }
        let code = (error as NSError).code
        switch XMLParser.ErrorCode(rawValue: code) {
        case .tagNameMismatchError?: return "an end tag does not match its start tag"
        case .prematureDocumentEndError?: return "the document ends too early"
        case .attributeRedefinedError?: return "an attribute is given twice"
        case .gtRequiredError?: return "a tag is not closed with '>'"
        case .ltRequiredError?: return "expected '<'"
        case .attributeNotStartedError?, .attributeNotFinishedError?: return "an attribute value is not quoted"
        case .entityRefLoopError?, .entityReferenceMissingSemiError?, .undeclaredEntityError?:
            return "an '&' that does not start a valid entity such as &amp;"
        case .emptyDocumentError?: return "the document is empty"
        default: return "XML parser error \(code)"
        }
    }
}
