#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A C library loaded at run time rather than linked: libsecret, libxml2, libdbus and tpm2-tss are optional on a
/// machine, so Coffer builds without their headers and runs every other command where they are missing. The library
/// stays loaded for the life of the process (nothing calls `dlclose`), so the functions taken from it stay valid.
/// A function's Swift type is written by hand from its C declaration; the `LoadedSignatureTests` suites check
/// every loader's types against the installed headers, parsed by clang (`Tests/oracles/c_signatures.py`).
public struct DynamicLibrary: @unchecked Sendable {
    // @unchecked: a `dlopen` handle is an opaque token that the loader lets any thread use.
    private let handle: UnsafeMutableRawPointer

    /// The first of `names` (sonames, tried in order) that loads, with its symbols resolved now and kept out of the
    /// global namespace; nil when none does.
    public init?(_ names: String...) {
        self.init(names: names)
    }

    /// The first of `names` that loads; see ``init(_:)``.
    public init?(names: [String]) {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else { return nil }
        self.handle = handle
    }

    /// The function `name`, as `type` (a `@convention(c)` function type matching its C declaration); nil when the
    /// library does not export it.
    public func function<Function>(_ name: String, as type: Function.Type) -> Function? {
        address(name).map { unsafeBitCast($0, to: type) }
    }

    /// The address of the symbol `name` (a function passed to C as a callback, or data); nil when it is not exported.
    public func address(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(handle, name)
    }
}
