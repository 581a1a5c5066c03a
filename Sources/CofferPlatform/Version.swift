/// The version every Coffer program reports (`coffer --version`, `coffer-server --version`): one number for the
/// release they ship in.
public enum CofferVersion {
    public static let current = "0.1.0"
}
