import CofferTestSupport
import Testing

@testable import CofferInterop

/// The XML reader's libxml2 functions, loaded at run time with types typed by hand, against libxml2's headers
/// (parsed by clang).
@Suite struct LoadedSignatureTests {
    @Test("libxml2's reader: every function's Swift type matches its header")
    func libxml2() throws {
        let library = try #require(LibXML2.shared, "libxml2 is not installed")
        let functions = CSignatures.functions(of: library)
        #expect(functions.count >= 10)
        let mismatches = try CSignatures.mismatches(functions, packages: ["libxml-2.0"], headers: ["libxml/xmlreader.h"])
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }
}
