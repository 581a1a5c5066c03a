import CofferCrypto
import CofferPlatform

#if canImport(CTSS2) && os(Linux)
import CTSS2
import Foundation
import Synchronization
#endif

/// A TPM 2.0 reached through tpm2-tss's ESAPI (Debian: libtss2-esys-3.0.2-0 and libtss2-tctildr0), loaded with
/// `dlopen` on first use so that Coffer runs where they are not installed.
///
/// Every operation opens its own connection and flushes every object it loaded before closing it: without a resource
/// manager (a raw `/dev/tpm0`, or swtpm in tests) a loaded object outlives its connection, and a TPM has room for
/// only three. Sealed objects are kept as their marshalled public and private parts (docs/FORMAT.md §1); the
/// storage key they are sealed under is derived again from the owner hierarchy's seed each time, so nothing of it is
/// stored, and the parts load only in the TPM that made them.
struct TPM2 {
    /// The TCTI configuration, e.g. `device:/dev/tpmrm0` or `swtpm:host=127.0.0.1,port=2321`.
    let tcti: String

    /// What went wrong, told apart the way key stores must tell them apart.
    enum Failure: Error, Equatable {
        /// No TPM is reachable through the TCTI, or the library is missing.
        case unreachable(String)
        /// The TPM is in dictionary-attack lockout.
        case lockout
        /// A wrong authorisation value (PIN); `counted` when the TPM's dictionary-attack counter went up.
        case wrongAuthorisation(counted: Bool)
        /// The sealed parts were made by another TPM (or damaged so that their integrity check fails there).
        case foreign
        /// The sealed parts are not marshalled TPM2B_PUBLIC and TPM2B_PRIVATE structures.
        case damaged
        /// Any other TPM or TSS error, by its response code.
        case failed(String, UInt32)
    }

    /// The TPM's dictionary-attack state: whether it is in lockout, its failure count, the failures it allows and the
    /// seconds after which one failure is forgotten.
    struct DictionaryAttackState: Equatable {
        let inLockout: Bool
        let failures: UInt32
        let maximumFailures: UInt32
        let recoverySeconds: UInt32
    }
}

#if canImport(CTSS2) && os(Linux)

extension TPM2 {
    /// Seals `secret` (at most 128 bytes) under this TPM's storage key; the object answers to `authorisation`
    /// (empty: none). With `dictionaryProtected` a wrong authorisation counts toward the TPM's lockout, and a TPM in
    /// lockout refuses the object; without it the object is usable even then (the device key needs no PIN).
    func seal(_ secret: SecretBytes, authorisation: SecretBytes, dictionaryProtected: Bool) throws(Failure) -> [UInt8] {
        guard secret.count <= 128, authorisation.count <= 64 else { throw .failed("value too long to seal", 0) }
        return try withContext { (library, context) throws(Failure) in
            let primary = try createPrimary(library, context)
            defer { _ = library.flushContext(context, primary) }
            var sensitive = TPM2B_SENSITIVE_CREATE()
            defer { withUnsafeMutableBytes(of: &sensitive) { SecretBytes.wipe($0) } }
            secret.withUnsafeBytes { source in
                withUnsafeMutableBytes(of: &sensitive.sensitive.data.buffer) { $0.copyMemory(from: source) }
            }
            sensitive.sensitive.data.size = UInt16(secret.count)
            authorisation.withUnsafeBytes { source in
                withUnsafeMutableBytes(of: &sensitive.sensitive.userAuth.buffer) { $0.copyMemory(from: source) }
            }
            sensitive.sensitive.userAuth.size = UInt16(authorisation.count)
            var template = TPM2B_PUBLIC()
            template.publicArea.type = TPMI_ALG_PUBLIC(TPM2_ALG_KEYEDHASH)
            template.publicArea.nameAlg = TPMI_ALG_HASH(TPM2_ALG_SHA256)
            template.publicArea.objectAttributes =
                TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH
                | (dictionaryProtected ? 0 : TPMA_OBJECT_NODA)
            template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPMI_ALG_KEYEDHASH_SCHEME(TPM2_ALG_NULL)
            var outsideInfo = TPM2B_DATA()
            var creationPCR = TPML_PCR_SELECTION()
            var privatePart: UnsafeMutablePointer<TPM2B_PRIVATE>?
            var publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>?
            try check(
                library.create(
                    context, primary, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &sensitive, &template,
                    &outsideInfo, &creationPCR, &privatePart, &publicPart, nil, nil, nil))
            defer {
                library.free(privatePart)
                library.free(publicPart)
            }
            guard let privatePart, let publicPart else { throw .failed("TPM2_Create returned nothing", 0) }
            return try marshal(library, publicPart, privatePart)
        }
    }

    /// Loads sealed parts made by `seal` and unloads them: whether this TPM can open them, learnt without an
    /// authorisation (so without touching the dictionary-attack counter).
    func checkLoads(_ parts: [UInt8]) throws(Failure) {
        try withContext { (library, context) throws(Failure) in
            let primary = try createPrimary(library, context)
            defer { _ = library.flushContext(context, primary) }
            let object = try load(library, context, parts, under: primary)
            _ = library.flushContext(context, object)
        }
    }

    /// Opens sealed parts made by `seal` with `authorisation`.
    func unseal(_ parts: [UInt8], authorisation: SecretBytes) throws(Failure) -> SecretBytes {
        try withContext { (library, context) throws(Failure) in
            let primary = try createPrimary(library, context)
            defer { _ = library.flushContext(context, primary) }
            let object = try load(library, context, parts, under: primary)
            defer { _ = library.flushContext(context, object) }
            var auth = TPM2B_AUTH()
            defer { withUnsafeMutableBytes(of: &auth) { SecretBytes.wipe($0) } }
            authorisation.withUnsafeBytes { source in withUnsafeMutableBytes(of: &auth.buffer) { $0.copyMemory(from: source) } }
            auth.size = UInt16(authorisation.count)
            try check(library.setAuth(context, object, &auth))
            var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
            try check(library.unseal(context, object, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &data))
            guard let data else { throw .failed("TPM2_Unseal returned nothing", 0) }
            defer {
                SecretBytes.wipe(UnsafeMutableRawBufferPointer(start: data, count: MemoryLayout<TPM2B_SENSITIVE_DATA>.size))
                library.free(data)
            }
            let count = min(Int(data.pointee.size), MemoryLayout.size(ofValue: data.pointee.buffer))
            return withUnsafeBytes(of: &data.pointee.buffer) { SecretBytes($0.prefix(count)) }
        }
    }

    /// Reads the dictionary-attack state (no authorisation needed): also the cheapest proof that the TPM answers.
    func dictionaryAttackState() throws(Failure) -> DictionaryAttackState {
        try withContext { (library, context) throws(Failure) in
            var more = TPMI_YES_NO(0)
            var capabilities: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
            try check(
                library.getCapability(
                    context, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), TPM2_CAP(TPM2_CAP_TPM_PROPERTIES),
                    Property.permanent, Property.lockoutInterval - Property.permanent + 1, &more, &capabilities))
            guard let capabilities else { throw .failed("TPM2_GetCapability returned nothing", 0) }
            defer { library.free(capabilities) }
            var values: [UInt32: UInt32] = [:]
            let properties = capabilities.pointee.data.tpmProperties
            withUnsafeBytes(of: properties.tpmProperty) { raw in
                let list = raw.bindMemory(to: TPMS_TAGGED_PROPERTY.self)
                for property in list.prefix(Int(properties.count)) { values[property.property] = property.value }
            }
            return DictionaryAttackState(
                inLockout: (values[Property.permanent] ?? 0) & UInt32(TPMA_PERMANENT_INLOCKOUT) != 0,
                failures: values[Property.lockoutCounter] ?? 0,
                maximumFailures: values[Property.maxAuthFail] ?? 0,
                recoverySeconds: values[Property.lockoutInterval] ?? 0)
        }
    }

    // MARK: Connection

    private func withContext<Result: Sendable>(
        _ body: (TSS2Library, OpaquePointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let library = try TSS2Library.shared()
        try reachable()
        // One connection at a time in this process: swtpm serves one client, and a raw device one open file.
        return try library.oneConnection.withLock { _ throws(Failure) -> Result in
            var tctiContext: OpaquePointer?
            let started = tcti.withCString { library.tctiInitialize($0, &tctiContext) }
            guard started == 0, let tctiContext else {
                throw Failure.unreachable("no TPM answers at \(tcti) (\(Self.hex(started)))")
            }
            defer {
                var finalised: OpaquePointer? = tctiContext
                library.tctiFinalize(&finalised)
            }
            var context: OpaquePointer?
            let initialised = library.initialize(&context, tctiContext, nil)
            guard initialised == 0, let context else { throw Failure.unreachable("the TPM at \(tcti) did not answer (\(Self.hex(initialised)))") }
            defer {
                var finalised: OpaquePointer? = context
                library.finalize(&finalised)
            }
            return try body(library, context)
        }
    }

    /// A device TCTI whose node is missing or closed to this user fails here with the reason, not in the loader's
    /// log.
    private func reachable() throws(Failure) {
        guard tcti.hasPrefix("device") else { return }
        let path = tcti.split(separator: ":", maxSplits: 1).dropFirst().first.map(String.init) ?? "/dev/tpmrm0"
        if access(path, F_OK) != 0 { throw .unreachable("this machine has no TPM at \(path)") }
        if access(path, R_OK | W_OK) != 0 {
            throw .unreachable("\(path) is not open to this user (add yourself to the tss group: sudo usermod -aG tss $USER)")
        }
    }

    // MARK: Objects

    /// Loads sealed parts under the storage key; another TPM's parts (or damaged ones) fail their integrity check.
    private func load(_ library: TSS2Library, _ context: OpaquePointer, _ parts: [UInt8], under primary: ESYS_TR) throws(Failure) -> ESYS_TR {
        var (publicPart, privatePart) = try unmarshal(library, parts)
        var object = ESYS_TR(ESYS_TR_NONE)
        let loaded = library.load(
            context, primary, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &privatePart, &publicPart, &object)
        if Self.code(loaded) == RC.integrity || Self.code(loaded) == RC.binding { throw .foreign }
        try check(loaded)
        return object
    }

    /// The storage key: an ECC P-256 restricted decryption key in the owner hierarchy, from the template of TCG's
    /// "Provisioning Guidance" (the one `tpm2_createprimary -G ecc256` uses) with `noDA` added. The same template gives
    /// the same key on the same TPM every time.
    private func createPrimary(_ library: TSS2Library, _ context: OpaquePointer) throws(Failure) -> ESYS_TR {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPMI_ALG_PUBLIC(TPM2_ALG_ECC)
        template.publicArea.nameAlg = TPMI_ALG_HASH(TPM2_ALG_SHA256)
        // noDA: loading a sealed object authorises this key (with its empty authorisation), and a TPM in
        // dictionary-attack lockout must still load the device key.
        template.publicArea.objectAttributes =
            TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM
            | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPMI_ALG_SYM_OBJECT(TPM2_ALG_AES)
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPMI_ALG_SYM_MODE(TPM2_ALG_CFB)
        template.publicArea.parameters.eccDetail.scheme.scheme = TPMI_ALG_ECC_SCHEME(TPM2_ALG_NULL)
        template.publicArea.parameters.eccDetail.curveID = TPMI_ECC_CURVE(TPM2_ECC_NIST_P256)
        template.publicArea.parameters.eccDetail.kdf.scheme = TPMI_ALG_KDF(TPM2_ALG_NULL)
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var handle = ESYS_TR(ESYS_TR_NONE)
        try check(
            library.createPrimary(
                context, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &sensitive,
                &template, &outsideInfo, &creationPCR, &handle, nil, nil, nil, nil))
        return handle
    }

    private func marshal(
        _ library: TSS2Library, _ publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>, _ privatePart: UnsafeMutablePointer<TPM2B_PRIVATE>
    ) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size + MemoryLayout<TPM2B_PRIVATE>.size)
        var offset = 0
        let capacity = buffer.count
        try buffer.withUnsafeMutableBufferPointer { (raw) throws(Failure) in
            try check(library.marshalPublic(publicPart, raw.baseAddress, capacity, &offset))
            try check(library.marshalPrivate(privatePart, raw.baseAddress, capacity, &offset))
        }
        return Array(buffer.prefix(offset))
    }

    private func unmarshal(_ library: TSS2Library, _ parts: [UInt8]) throws(Failure) -> (TPM2B_PUBLIC, TPM2B_PRIVATE) {
        var publicPart = TPM2B_PUBLIC()
        var privatePart = TPM2B_PRIVATE()
        var offset = 0
        let unmarshalled = parts.withUnsafeBufferPointer { raw -> Bool in
            library.unmarshalPublic(raw.baseAddress, raw.count, &offset, &publicPart) == 0
                && library.unmarshalPrivate(raw.baseAddress, raw.count, &offset, &privatePart) == 0
        }
        // Canonical or damaged: the unmarshaller takes a TPM2B's size field on trust, so the parts must marshal back
        // to the same bytes.
        guard unmarshalled, offset == parts.count, (try? marshal(library, &publicPart, &privatePart)) == parts else { throw .damaged }
        return (publicPart, privatePart)
    }

    // MARK: Response codes

    private func check(_ rc: TSS2_RC) throws(Failure) {
        guard rc != 0 else { return }
        switch Self.code(rc) {
        case RC.lockout: throw .lockout
        case RC.authFail: throw .wrongAuthorisation(counted: true)
        case RC.badAuth: throw .wrongAuthorisation(counted: false)
        case RC.objectMemory, RC.sessionMemory:
            throw .failed("the TPM has no room for another object (a program left objects loaded; restart it or its resource manager)", rc)
        default:
            // Not the TPM's own answer: the TSS or the link to the TPM failed.
            if rc >> 16 != 0 { throw .unreachable("the TPM at \(tcti) could not be used (\(Self.hex(rc)))") }
            throw .failed("the TPM refused (\(Self.hex(rc)))", rc)
        }
    }

    /// The TPM's response code without its parameter, handle or session number; other layers' codes unchanged.
    static func code(_ rc: TSS2_RC) -> TSS2_RC {
        guard rc >> 16 == 0 else { return rc }
        // Format 1 (bit 7): the error in bits 0–5, its position in bits 6 and 8–11.
        if rc & 0x80 != 0 { return (rc & 0x3F) | 0x80 }
        return rc & 0xFFF
    }

    static func hex(_ rc: TSS2_RC) -> String { "TSS2 response 0x" + String(rc, radix: 16) }

    /// Response codes the header defines as sums of other macros, which Swift does not import (TPM 2.0 Part 2, 6.6).
    enum RC {
        static let authFail = TSS2_RC(TPM2_RC_FMT1) + 0x00E
        static let integrity = TSS2_RC(TPM2_RC_FMT1) + 0x01F
        static let badAuth = TSS2_RC(TPM2_RC_FMT1) + 0x022
        static let binding = TSS2_RC(TPM2_RC_FMT1) + 0x025
        static let objectMemory = TSS2_RC(TPM2_RC_WARN) + 0x002
        static let sessionMemory = TSS2_RC(TPM2_RC_WARN) + 0x003
        static let lockout = TSS2_RC(TPM2_RC_WARN) + 0x021
    }

    /// The variable TPM properties read here (TPM2_PT_VAR + n, Part 2, 6.13).
    enum Property {
        static let permanent = UInt32(TPM2_PT_GROUP) * 2
        static let lockoutCounter = permanent + 14
        static let maxAuthFail = permanent + 15
        static let lockoutInterval = permanent + 16
    }
}

/// tpm2-tss's ESAPI, TCTI loader and marshalling functions, loaded once per process. Each signature is the C
/// header's: `TPM2SignatureTests` assigns the linked functions to these types, so a mismatch fails to compile.
final class TSS2Library: @unchecked Sendable {
    typealias TctiInitialize = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?) -> TSS2_RC
    typealias TctiFinalize = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
    typealias Initialize = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, UnsafeMutablePointer<TSS2_ABI_VERSION>?) -> TSS2_RC
    typealias Finalize = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
    typealias CreatePrimary =
        @convention(c) (
            OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, UnsafePointer<TPM2B_SENSITIVE_CREATE>?, UnsafePointer<TPM2B_PUBLIC>?,
            UnsafePointer<TPM2B_DATA>?, UnsafePointer<TPML_PCR_SELECTION>?, UnsafeMutablePointer<ESYS_TR>?,
            UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>?, UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_CREATION_DATA>?>?,
            UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?, UnsafeMutablePointer<UnsafeMutablePointer<TPMT_TK_CREATION>?>?
        ) -> TSS2_RC
    typealias Create =
        @convention(c) (
            OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, UnsafePointer<TPM2B_SENSITIVE_CREATE>?, UnsafePointer<TPM2B_PUBLIC>?,
            UnsafePointer<TPM2B_DATA>?, UnsafePointer<TPML_PCR_SELECTION>?, UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PRIVATE>?>?,
            UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>?, UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_CREATION_DATA>?>?,
            UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?, UnsafeMutablePointer<UnsafeMutablePointer<TPMT_TK_CREATION>?>?
        ) -> TSS2_RC
    typealias Load =
        @convention(c) (
            OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, UnsafePointer<TPM2B_PRIVATE>?, UnsafePointer<TPM2B_PUBLIC>?,
            UnsafeMutablePointer<ESYS_TR>?
        ) -> TSS2_RC
    typealias SetAuth = @convention(c) (OpaquePointer?, ESYS_TR, UnsafePointer<TPM2B_AUTH>?) -> TSS2_RC
    typealias Unseal =
        @convention(c) (
            OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?>?
        ) -> TSS2_RC
    typealias FlushContext = @convention(c) (OpaquePointer?, ESYS_TR) -> TSS2_RC
    typealias GetCapability =
        @convention(c) (
            OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, TPM2_CAP, UInt32, UInt32, UnsafeMutablePointer<TPMI_YES_NO>?,
            UnsafeMutablePointer<UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?>?
        ) -> TSS2_RC
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias MarshalPublic = @convention(c) (UnsafePointer<TPM2B_PUBLIC>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
    typealias UnmarshalPublic = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<TPM2B_PUBLIC>?) -> TSS2_RC
    typealias MarshalPrivate = @convention(c) (UnsafePointer<TPM2B_PRIVATE>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
    typealias UnmarshalPrivate = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<TPM2B_PRIVATE>?) -> TSS2_RC

    let tctiInitialize: TctiInitialize
    let tctiFinalize: TctiFinalize
    let initialize: Initialize
    let finalize: Finalize
    let createPrimary: CreatePrimary
    let create: Create
    let load: Load
    let setAuth: SetAuth
    let unseal: Unseal
    let flushContext: FlushContext
    let getCapability: GetCapability
    private let freeFunction: Free
    let marshalPublic: MarshalPublic
    let unmarshalPublic: UnmarshalPublic
    let marshalPrivate: MarshalPrivate
    let unmarshalPrivate: UnmarshalPrivate
    /// One connection at a time (see `TPM2.withContext`).
    let oneConnection = Mutex(())

    /// Loaded once, on first use (a static's initialiser runs once, under the runtime's lock).
    private static let loaded: TSS2Library? = {
        // ESAPI logs every TPM error to standard error; Coffer reports them itself. A person who set TSS2_LOG keeps it.
        setenv("TSS2_LOG", "all+NONE", 0)
        return TSS2Library()
    }()

    /// The libraries, loaded on first use; `.unreachable` when they are not installed.
    static func shared() throws(TPM2.Failure) -> TSS2Library {
        guard let library = loaded else {
            throw .unreachable("tpm2-tss is not installed (Debian: apt-get install libtss2-esys-3.0.2-0 libtss2-tctildr0)")
        }
        return library
    }

    func free(_ pointer: UnsafeMutableRawPointer?) { freeFunction(pointer) }
    func free<T>(_ pointer: UnsafeMutablePointer<T>?) { freeFunction(pointer.map(UnsafeMutableRawPointer.init)) }

    private init?() {
        guard let esys = DynamicLibrary("libtss2-esys.so.0"), let loader = DynamicLibrary("libtss2-tctildr.so.0"),
            let mu = DynamicLibrary("libtss2-mu.so.0")
        else { return nil }
        func symbol<T>(_ library: DynamicLibrary, _ name: String, _ type: T.Type) -> T? { library.function(name, as: type) }
        guard let tctiInitialize = symbol(loader, "Tss2_TctiLdr_Initialize", TctiInitialize.self),
            let tctiFinalize = symbol(loader, "Tss2_TctiLdr_Finalize", TctiFinalize.self),
            let initialize = symbol(esys, "Esys_Initialize", Initialize.self),
            let finalize = symbol(esys, "Esys_Finalize", Finalize.self),
            let createPrimary = symbol(esys, "Esys_CreatePrimary", CreatePrimary.self),
            let create = symbol(esys, "Esys_Create", Create.self),
            let load = symbol(esys, "Esys_Load", Load.self),
            let setAuth = symbol(esys, "Esys_TR_SetAuth", SetAuth.self),
            let unseal = symbol(esys, "Esys_Unseal", Unseal.self),
            let flushContext = symbol(esys, "Esys_FlushContext", FlushContext.self),
            let getCapability = symbol(esys, "Esys_GetCapability", GetCapability.self),
            let free = symbol(esys, "Esys_Free", Free.self),
            let marshalPublic = symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Marshal", MarshalPublic.self),
            let unmarshalPublic = symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Unmarshal", UnmarshalPublic.self),
            let marshalPrivate = symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Marshal", MarshalPrivate.self),
            let unmarshalPrivate = symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Unmarshal", UnmarshalPrivate.self)
        else { return nil }
        self.tctiInitialize = tctiInitialize
        self.tctiFinalize = tctiFinalize
        self.initialize = initialize
        self.finalize = finalize
        self.createPrimary = createPrimary
        self.create = create
        self.load = load
        self.setAuth = setAuth
        self.unseal = unseal
        self.flushContext = flushContext
        self.getCapability = getCapability
        self.freeFunction = free
        self.marshalPublic = marshalPublic
        self.unmarshalPublic = unmarshalPublic
        self.marshalPrivate = marshalPrivate
        self.unmarshalPrivate = unmarshalPrivate
    }
}
#else
/// No TPM support where tpm2-tss's headers were not available at build time (Apple platforms).
extension TPM2 {
    private static let none = Failure.unreachable("this build of Coffer has no TPM support")

    func seal(_ secret: SecretBytes, authorisation: SecretBytes, dictionaryProtected: Bool) throws(Failure) -> [UInt8] { throw Self.none }
    func unseal(_ parts: [UInt8], authorisation: SecretBytes) throws(Failure) -> SecretBytes { throw Self.none }
    func checkLoads(_ parts: [UInt8]) throws(Failure) { throw Self.none }
    func dictionaryAttackState() throws(Failure) -> DictionaryAttackState { throw Self.none }
}
#endif
