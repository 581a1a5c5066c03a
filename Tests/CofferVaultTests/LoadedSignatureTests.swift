import CofferTestSupport
import Testing

@testable import CofferKeystore

/// The key stores' C functions, loaded at run time with types typed by hand, against the libraries' own headers
/// (parsed by clang): a wrong type would be undefined behaviour that no compiler sees.
@Suite struct LoadedSignatureTests {
    @Test("libsecret, GLib and GObject: every function's Swift type matches its header")
    func libsecret() throws {
        let functions = CSignatures.functions(of: try LibSecret.shared())
        // The loader's whole table: a reflection that found nothing would pass vacuously.
        #expect(functions.count >= 17)
        let mismatches = try CSignatures.mismatches(functions, packages: ["libsecret-1"], headers: ["libsecret/secret.h"])
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test("the check sees a wrong type, a missing parameter, a wrong result and an undeclared function")
    func checkCanFail() throws {
        let wrong: [(symbol: String, swiftType: String)] = [
            ("secret_password_free", "@convention(c) (Swift.Int32) -> ()"),
            ("g_hash_table_insert", "@convention(c) (Swift.UnsafeMutableRawPointer, Swift.UnsafeMutableRawPointer) -> Swift.Int32"),
            ("secret_collection_get_locked", "@convention(c) (Swift.OpaquePointer) -> Swift.Int64"),
            ("secret_no_such_function", "@convention(c) () -> ()"),
            ("g_object_unref", "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>) -> ()"),
        ]
        let mismatches = try CSignatures.mismatches(wrong, packages: ["libsecret-1"], headers: ["libsecret/secret.h"])
        #expect(mismatches.map { String($0.prefix { $0 != ":" }) } == wrong.dropLast().map(\.symbol))
    }

    #if os(Linux)
    @Test("tpm2-tss (ESAPI, the TCTI loader, marshalling): every function's Swift type matches its header")
    func tpm2() throws {
        let functions = CSignatures.functions(of: try TSS2Library.shared())
        #expect(functions.count >= 16)
        let mismatches = try CSignatures.mismatches(
            functions, packages: ["tss2-esys", "tss2-mu", "tss2-tctildr"],
            headers: ["tss2/tss2_esys.h", "tss2/tss2_mu.h", "tss2/tss2_tctildr.h"])
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }
    #endif
}
