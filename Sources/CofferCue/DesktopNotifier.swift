import Foundation

#if canImport(CDBus)
import CDBus
#endif

/// Shows a cue as a desktop notification through `org.freedesktop.Notifications` on the session bus (GNOME, KDE,
/// XFCE, dunst, mako…). Without a session bus, or where none answers, `show` returns false and the caller prints.
public final class DesktopNotifier: @unchecked Sendable {
    // libdbus connections are used from one thread at a time here: `show` holds the lock.
    private let lock = NSLock()
    #if canImport(CDBus)
    private var connection: OpaquePointer?
    #endif
    private var lastID: UInt32 = 0

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`; nil when there is none or it does not answer.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        #if canImport(CDBus)
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else { return nil }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error) else { return nil }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        self.connection = connection
        #else
        return nil
        #endif
    }

    deinit {
        #if canImport(CDBus)
        if let connection {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        #endif
    }

    /// Shows `title` and `body`, replacing this notifier's previous notification (one card at a time on screen).
    /// Returns whether the notification server accepted it.
    @discardableResult
    public func show(title: String, body: String, timeout: Duration = .seconds(30)) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        #if canImport(CDBus)
        guard let connection,
              let message = dbus_message_new_method_call(
                "org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "Notify")
        else { return false }
        defer { dbus_message_unref(message) }
        var arguments = DBusMessageIter()
        dbus_message_iter_init_append(message, &arguments)
        var ok = Self.append(string: "Coffer", to: &arguments)
        var replaces = lastID
        ok = ok && dbus_message_iter_append_basic(&arguments, DBusType.uint32, &replaces) != 0
        ok = ok && Self.append(string: "wallet", to: &arguments)
        ok = ok && Self.append(string: title, to: &arguments)
        ok = ok && Self.append(string: body, to: &arguments)
        var actions = DBusMessageIter()
        ok = ok && dbus_message_iter_open_container(&arguments, DBusType.array, "s", &actions) != 0
        ok = ok && dbus_message_iter_close_container(&arguments, &actions) != 0
        var hints = DBusMessageIter()
        ok = ok && dbus_message_iter_open_container(&arguments, DBusType.array, "{sv}", &hints) != 0
        ok = ok && dbus_message_iter_close_container(&arguments, &hints) != 0
        var milliseconds = Int32(clamping: timeout.components.seconds * 1000)
        ok = ok && dbus_message_iter_append_basic(&arguments, DBusType.int32, &milliseconds) != 0
        guard ok else { return false }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, 5_000, &error) else { return false }
        defer { dbus_message_unref(reply) }
        var id: UInt32 = 0
        var iterator = DBusMessageIter()
        if dbus_message_iter_init(reply, &iterator) != 0, dbus_message_iter_get_arg_type(&iterator) == DBusType.uint32 {
            dbus_message_iter_get_basic(&iterator, &id)
            lastID = id
        }
        return true
        #else
        return false
        #endif
    }

    #if canImport(CDBus)
    /// D-Bus type codes (macros in dbus-protocol.h, which Swift does not import).
    private enum DBusType {
        static let uint32 = Int32(UInt8(ascii: "u"))
        static let int32 = Int32(UInt8(ascii: "i"))
        static let string = Int32(UInt8(ascii: "s"))
        static let array = Int32(UInt8(ascii: "a"))
    }

    private static func append(string: String, to iterator: inout DBusMessageIter) -> Bool {
        // D-Bus strings must be valid UTF-8 without NUL; Swift strings are UTF-8, and NULs are dropped here.
        let clean = string.replacingOccurrences(of: "\u{0}", with: "")
        return clean.withCString { pointer in
            var value: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, DBusType.string, &value) != 0
        }
    }
    #endif
}
