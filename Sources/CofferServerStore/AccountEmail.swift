import Foundation

/// The one form an account email is compared and stored in: surrounding spaces trimmed, lower-cased, then Unicode
/// NFC. Both stores compare emails byte for byte, and a person can type one address as different code points
/// ("é" precomposed or as "e" and a combining accent, depending on the keyboard); without one canonical form these
/// were two accounts, two rate-limit keys and two pre-login salts. NFC after lower-casing, because case mapping can
/// leave a string that is not in NFC.
public enum AccountEmail {
    /// The canonical form of `text`; validation (length, `@`, control characters) is the caller's.
    public static func canonical(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).lowercased().precomposedStringWithCanonicalMapping
    }
}
