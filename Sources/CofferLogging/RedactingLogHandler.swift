import Logging

/// A log handler that can never print a secret by accident: metadata under sensitive keys is replaced by
/// `<redacted>`, and so is any value wrapped in `Redacted`. Messages are the caller's constant strings; put values
/// in metadata, never in the message.
public struct RedactingLogHandler: LogHandler {
    /// Metadata keys whose values are always withheld (compared case-insensitively, also as suffixes such as
    /// `card_name`).
    public static let sensitiveKeys: Set<String> = [
        "secret", "passphrase", "password", "pin", "payload", "value", "token", "seed", "key", "name", "code",
        "position", "latitude", "longitude", "location", "uri", "note", "text",
    ]

    private var inner: any LogHandler

    public init(wrapping inner: any LogHandler) {
        self.inner = inner
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = Self.redact(newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map { Self.redact(key: key, value: $0) } }
    }

    public func log(event: LogEvent) {
        var event = event
        event.metadata = event.metadata.map(Self.redact)
        inner.log(event: event)
    }

    /// Applies the redaction rules to a whole metadata dictionary.
    public static func redact(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var result: Logger.Metadata = [:]
        for (key, value) in metadata { result[key] = redact(key: key, value: value) }
        return result
    }

    static func redact(key: String, value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        let lowered = key.lowercased()
        if sensitiveKeys.contains(where: { lowered == $0 || lowered.hasSuffix("_" + $0) || lowered.hasSuffix("." + $0) }) {
            return "<redacted>"
        }
        switch value {
        case .stringConvertible(let convertible) where convertible is any RedactedValue:
            return "<redacted>"
        case .dictionary(let nested):
            return .dictionary(redact(nested))
        case .array(let values):
            return .array(values.map { redact(key: key, value: $0) })
        default:
            return value
        }
    }
}

/// Marks a metadata value that must never be printed.
protocol RedactedValue {}

/// Wraps a value for logging so that only `<redacted>` is ever printed.
public struct Redacted<Wrapped: Sendable>: CustomStringConvertible, RedactedValue, Sendable {
    private let wrapped: Wrapped

    public init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    public var description: String { "<redacted>" }
}

/// Coffer's loggers: redacting, to standard error, quiet unless `COFFER_LOG` names a level.
public enum CofferLog {
    /// Installs the redacting handler as the process's logging backend (call once at start-up).
    public static func bootstrap(environment: [String: String]) {
        let level = environment["COFFER_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        LoggingSystem.bootstrap { label in
            var handler = RedactingLogHandler(wrapping: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
    }
}

/// A log handler for a library whose log lines can carry the data passing through it (a database driver's trace
/// lines hold result rows and statement parameters). Only metadata under the keys the caller names as safe is
/// passed on, under the redaction rules of `RedactingLogHandler`; every other value becomes `<withheld>`. The lines
/// themselves stay, with their level and message, so connection trouble still shows.
public struct AllowlistLogHandler: LogHandler {
    private var inner: any LogHandler
    private let allowedKeys: Set<String>

    /// `inner` receives every event, with metadata outside `allowedKeys` withheld.
    public init(wrapping inner: any LogHandler, allowedKeys: Set<String>) {
        self.inner = inner
        self.allowedKeys = allowedKeys
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = filtered(newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map { filtered(key: key, value: $0) } }
    }

    public func log(event: LogEvent) {
        var event = event
        event.metadata = event.metadata.map(filtered)
        inner.log(event: event)
    }

    private func filtered(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var result: Logger.Metadata = [:]
        for (key, value) in metadata { result[key] = filtered(key: key, value: value) }
        return result
    }

    private func filtered(key: String, value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        allowedKeys.contains(key) ? RedactingLogHandler.redact(key: key, value: value) : "<withheld>"
    }
}

extension Logger {
    /// This logger with every metadata value withheld except those under `keys` (see `AllowlistLogHandler`).
    public func keepingMetadata(only keys: Set<String>) -> Logger {
        var logger = self
        logger.handler = AllowlistLogHandler(wrapping: handler, allowedKeys: keys)
        return logger
    }
}
