import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The C functions a run-time loader (libsecret, libdbus, libxml2) holds, checked against the library's headers:
/// their Swift types are typed by hand, and a wrong one is undefined behaviour that no compiler reports.
public enum CSignatures {
    /// Each `@convention(c)` function stored in `loader` (a struct or class of function values, as `DynamicLibrary`
    /// fills them), with the symbol it points to and its Swift type.
    public static func functions(of loader: Any) -> [(symbol: String, swiftType: String)] {
        var functions: [(symbol: String, swiftType: String)] = []
        for child in Mirror(reflecting: loader).children {
            let swiftType = String(reflecting: type(of: child.value))
            guard swiftType.hasPrefix("@convention(c)") || swiftType.hasPrefix("Swift.Optional<@convention(c)") else { continue }
            // A C function value is one pointer, stored inline at the start of the `Any` (Swift's stable existential
            // layout: a three-word buffer, then the type).
            var value = child.value
            let address = withUnsafeBytes(of: &value) { $0.load(as: UnsafeRawPointer?.self) }
            if let address, let symbol = symbolName(address) { functions.append((symbol, swiftType)) }
        }
        return functions
    }

    /// What `Tests/oracles/c_signatures.py` finds wrong in `functions`, parsed by clang from `headers` with the
    /// flags of the pkg-config `packages`: one line per mismatch, none when every type agrees with its declaration.
    public static func mismatches(
        _ functions: [(symbol: String, swiftType: String)], packages: [String], headers: [String]
    ) throws -> [String] {
        let clang = URL(fileURLWithPath: try swiftCompiler()).deletingLastPathComponent().appendingPathComponent("clang").path
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/oracles/c_signatures.py").path
        let input = try JSONSerialization.data(withJSONObject: functions.map { ["symbol": $0.symbol, "swift": $0.swiftType] })
        let result = try TestSupport.run("/usr/bin/env", ["python3", script, clang] + packages + ["--"] + headers, input: Array(input))
        guard result.status == 0 else {
            throw TestSupport.OracleError.unavailable(
                "the headers of \(packages.joined(separator: ", ")) (Debian: libsecret-1-dev libdbus-1-dev libxml2-dev): "
                    + String(decoding: result.standardError.suffix(400), as: UTF8.self))
        }
        guard let lines = try JSONSerialization.jsonObject(with: Data(result.standardOutput)) as? [String] else {
            throw TestSupport.OracleError.failed("c_signatures.py did not answer with a list of lines")
        }
        return lines
    }

    /// glibc's `Dl_info` (dlfcn.h), which Swift's Glibc module leaves out with `dladdr` (both need _GNU_SOURCE).
    private struct SymbolInformation {
        var fileName: UnsafePointer<CChar>?
        var fileBase: UnsafeMutableRawPointer?
        var symbolName: UnsafePointer<CChar>?
        var symbolAddress: UnsafeMutableRawPointer?
    }

    private typealias AddressLookup = @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer) -> Int32

    private static func symbolName(_ address: UnsafeRawPointer) -> String? {
        guard let dladdr = dlsym(nil, "dladdr").map({ unsafeBitCast($0, to: AddressLookup.self) }) else { return nil }
        var information = SymbolInformation()
        let found = withUnsafeMutableBytes(of: &information) { dladdr(address, $0.baseAddress!) }
        guard found != 0, let name = information.symbolName else { return nil }
        return String(cString: name)
    }

    /// The toolchain's swiftc: its directory holds the clang that parses the headers.
    private static func swiftCompiler() throws -> String {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swiftc").resolvingSymlinksInPath().path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupport.OracleError.unavailable("swiftc on PATH (its clang parses the C headers)")
    }
}
