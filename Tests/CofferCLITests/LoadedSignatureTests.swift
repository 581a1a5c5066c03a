import CofferTestSupport
import Testing

@testable import CofferCue

/// The desktop notifier's libdbus functions, loaded at run time with types typed by hand, against libdbus's headers
/// (parsed by clang).
@Suite struct LoadedSignatureTests {
    @Test("libdbus: every function's Swift type matches its header")
    func libdbus() throws {
        let library = try #require(DBusAPI.load(), "libdbus-1.so.3 is not installed")
        let functions = CSignatures.functions(of: library)
        #expect(functions.count >= 16)
        let mismatches = try CSignatures.mismatches(functions, packages: ["dbus-1"], headers: ["dbus/dbus.h"])
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }
}
