#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where Coffer keeps its files by default, following the XDG base-directory rules on Linux.
public enum DataLocations {
    /// `$XDG_DATA_HOME/coffer`, else `$HOME/.local/share/coffer`.
    public static func dataDirectory(environment: [String: String]) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return "\(xdg)/coffer"
        }
        return "\(home(environment))/.local/share/coffer"
    }

    /// `$XDG_STATE_HOME/coffer`, else `$HOME/.local/state/coffer`: what belongs to this machine rather than to the
    /// data (the file key store's keys), kept apart so that a copy of the data directory carries none of it.
    public static func stateDirectory(environment: [String: String]) -> String {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return "\(xdg)/coffer"
        }
        return "\(home(environment))/.local/state/coffer"
    }

    /// This machine's host name (the default name of its device slots), or "this device" when it has none.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this device" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "this device" : name
    }

    private static func home(_ environment: [String: String]) -> String {
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeFromPasswordDatabase() ?? "."
    }

    private static func homeFromPasswordDatabase() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
