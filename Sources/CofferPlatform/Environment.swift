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
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeFromPasswordDatabase() ?? "."
        return "\(home)/.local/share/coffer"
    }

    private static func homeFromPasswordDatabase() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
