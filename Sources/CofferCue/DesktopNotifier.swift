import Foundation
import Synchronization

import CofferPlatform

/// Shows a cue as a desktop notification through `org.freedesktop.Notifications` on the session bus (GNOME, KDE,
/// XFCE, dunst, mako…). Without a session bus, or where none answers, `show` returns false and the caller prints.
///
/// libdbus is loaded at run time (`libdbus-1.so.3`, present wherever a desktop is) rather than linked: building Coffer
/// needs no D-Bus headers, a headless machine without the library still runs every other command, and the commands
/// people run many times a day do not load it at all.
public final class DesktopNotifier: @unchecked Sendable {
    private let api: DBusAPI
    private let connection: OpaquePointer
    /// The id of this notifier's last notification. libdbus connections are used from one thread at a time: `show`
    /// holds this lock for the whole call.
    private let lastShown = Mutex<UInt32>(0)

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`; nil without one, or without libdbus.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty, let api = DBusAPI.load() else { return nil }
        let error = DBusErrorBuffer(api)
        defer { error.free() }
        // DBUS_BUS_SESSION is 0.
        guard let connection = api.busGetPrivate(0, error.pointer) else { return nil }
        api.setExitOnDisconnect(connection, 0)
        self.api = api
        self.connection = connection
    }

    deinit {
        api.connectionClose(connection)
        api.connectionUnref(connection)
    }

    /// Shows `title` and `body`, replacing this notifier's previous notification (one card at a time on screen).
    /// Returns whether the notification server accepted it.
    @discardableResult
    public func show(title: String, body: String, timeout: Duration = .seconds(30)) -> Bool {
        lastShown.withLock { lastID in send(title: title, body: body, timeout: timeout, replacing: &lastID) }
    }

    private func send(title: String, body: String, timeout: Duration, replacing lastID: inout UInt32) -> Bool {
        guard
            let message = api.newMethodCall(
                "org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "Notify")
        else { return false }
        defer { api.messageUnref(message) }
        let arguments = IteratorBuffer()
        let actions = IteratorBuffer()
        let hints = IteratorBuffer()
        defer { [arguments, actions, hints].forEach { $0.release() } }
        api.iterInitAppend(message, arguments.pointer)
        var replaces = lastID
        var milliseconds = Int32(clamping: timeout.components.seconds * 1000)
        var ok = append(string: "Coffer", to: arguments)
        ok = ok && api.iterAppendBasic(arguments.pointer, DBusType.uint32, &replaces) != 0
        ok = ok && append(string: "wallet", to: arguments)
        ok = ok && append(string: title, to: arguments)
        ok = ok && append(string: body, to: arguments)
        ok = ok && api.iterOpenContainer(arguments.pointer, DBusType.array, "s", actions.pointer) != 0
        ok = ok && api.iterCloseContainer(arguments.pointer, actions.pointer) != 0
        ok = ok && api.iterOpenContainer(arguments.pointer, DBusType.array, "{sv}", hints.pointer) != 0
        ok = ok && api.iterCloseContainer(arguments.pointer, hints.pointer) != 0
        ok = ok && api.iterAppendBasic(arguments.pointer, DBusType.int32, &milliseconds) != 0
        guard ok else { return false }
        let error = DBusErrorBuffer(api)
        defer { error.free() }
        guard let reply = api.sendWithReplyAndBlock(connection, message, 5_000, error.pointer) else { return false }
        defer { api.messageUnref(reply) }
        let replyIterator = IteratorBuffer()
        defer { replyIterator.release() }
        var id: UInt32 = 0
        if api.iterInit(reply, replyIterator.pointer) != 0, api.iterGetArgType(replyIterator.pointer) == DBusType.uint32 {
            api.iterGetBasic(replyIterator.pointer, &id)
            lastID = id
        }
        return true
    }

    private func append(string: String, to iterator: IteratorBuffer) -> Bool {
        // D-Bus strings must be valid UTF-8 without NUL; Swift strings are UTF-8, and NULs are dropped here.
        string.replacingOccurrences(of: "\u{0}", with: "").withCString { pointer in
            var value: UnsafePointer<CChar>? = pointer
            return api.iterAppendBasic(iterator.pointer, DBusType.string, &value) != 0
        }
    }
}

/// D-Bus type codes (`DBUS_TYPE_*` in dbus-protocol.h).
private enum DBusType {
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let int32 = Int32(UInt8(ascii: "i"))
    static let string = Int32(UInt8(ascii: "s"))
    static let array = Int32(UInt8(ascii: "a"))
}

/// Zeroed, aligned room for a `DBusMessageIter` (72 bytes in libdbus 1.x; its size is part of the stable ABI).
private final class IteratorBuffer {
    let pointer = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 16)

    init() { pointer.initializeMemory(as: UInt8.self, repeating: 0, count: 128) }

    func release() { pointer.deallocate() }
}

/// A `DBusError` (32 bytes: two pointers, a bit-field word, a pointer), initialised and freed through libdbus.
private struct DBusErrorBuffer {
    let api: DBusAPI
    let pointer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)

    init(_ api: DBusAPI) {
        self.api = api
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        api.errorInit(pointer)
    }

    func free() {
        api.errorFree(pointer)
        pointer.deallocate()
    }
}

/// The libdbus functions the notifier calls, looked up once in `libdbus-1.so.3`.
struct DBusAPI: @unchecked Sendable {
    typealias Raw = UnsafeMutableRawPointer
    let errorInit: @convention(c) (Raw) -> Void
    let errorFree: @convention(c) (Raw) -> Void
    let busGetPrivate: @convention(c) (Int32, Raw) -> OpaquePointer?
    let setExitOnDisconnect: @convention(c) (OpaquePointer, UInt32) -> Void
    let connectionClose: @convention(c) (OpaquePointer) -> Void
    let connectionUnref: @convention(c) (OpaquePointer) -> Void
    let newMethodCall: @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>) -> OpaquePointer?
    let messageUnref: @convention(c) (OpaquePointer) -> Void
    let iterInitAppend: @convention(c) (OpaquePointer, Raw) -> Void
    let iterAppendBasic: @convention(c) (Raw, Int32, UnsafeRawPointer) -> UInt32
    let iterOpenContainer: @convention(c) (Raw, Int32, UnsafePointer<CChar>?, Raw) -> UInt32
    let iterCloseContainer: @convention(c) (Raw, Raw) -> UInt32
    let sendWithReplyAndBlock: @convention(c) (OpaquePointer, OpaquePointer, Int32, Raw) -> OpaquePointer?
    let iterInit: @convention(c) (OpaquePointer, Raw) -> UInt32
    let iterGetArgType: @convention(c) (Raw) -> Int32
    let iterGetBasic: @convention(c) (Raw, UnsafeMutableRawPointer) -> Void

    static func load() -> DBusAPI? {
        guard let library = DynamicLibrary("libdbus-1.so.3") else { return nil }
        func symbol<T>(_ name: String, _ type: T.Type) -> T? { library.function(name, as: type) }
        guard let errorInit = symbol("dbus_error_init", (@convention(c) (Raw) -> Void).self),
            let errorFree = symbol("dbus_error_free", (@convention(c) (Raw) -> Void).self),
            let busGetPrivate = symbol("dbus_bus_get_private", (@convention(c) (Int32, Raw) -> OpaquePointer?).self),
            let setExit = symbol("dbus_connection_set_exit_on_disconnect", (@convention(c) (OpaquePointer, UInt32) -> Void).self),
            let close = symbol("dbus_connection_close", (@convention(c) (OpaquePointer) -> Void).self),
            let unref = symbol("dbus_connection_unref", (@convention(c) (OpaquePointer) -> Void).self),
            let newCall = symbol(
                "dbus_message_new_method_call",
                (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>) -> OpaquePointer?).self),
            let messageUnref = symbol("dbus_message_unref", (@convention(c) (OpaquePointer) -> Void).self),
            let initAppend = symbol("dbus_message_iter_init_append", (@convention(c) (OpaquePointer, Raw) -> Void).self),
            let appendBasic = symbol("dbus_message_iter_append_basic", (@convention(c) (Raw, Int32, UnsafeRawPointer) -> UInt32).self),
            let open = symbol(
                "dbus_message_iter_open_container", (@convention(c) (Raw, Int32, UnsafePointer<CChar>?, Raw) -> UInt32).self),
            let closeContainer = symbol("dbus_message_iter_close_container", (@convention(c) (Raw, Raw) -> UInt32).self),
            let send = symbol(
                "dbus_connection_send_with_reply_and_block",
                (@convention(c) (OpaquePointer, OpaquePointer, Int32, Raw) -> OpaquePointer?).self),
            let iterInit = symbol("dbus_message_iter_init", (@convention(c) (OpaquePointer, Raw) -> UInt32).self),
            let argType = symbol("dbus_message_iter_get_arg_type", (@convention(c) (Raw) -> Int32).self),
            let getBasic = symbol("dbus_message_iter_get_basic", (@convention(c) (Raw, UnsafeMutableRawPointer) -> Void).self)
        else { return nil }
        return DBusAPI(
            errorInit: errorInit, errorFree: errorFree, busGetPrivate: busGetPrivate, setExitOnDisconnect: setExit,
            connectionClose: close, connectionUnref: unref, newMethodCall: newCall, messageUnref: messageUnref,
            iterInitAppend: initAppend, iterAppendBasic: appendBasic, iterOpenContainer: open,
            iterCloseContainer: closeContainer, sendWithReplyAndBlock: send, iterInit: iterInit, iterGetArgType: argType,
            iterGetBasic: getBasic)
    }
}
