import Foundation

/// Tests/oracles/places_oracle.py: distances from the `haversine` package and GeographicLib, geohash from
/// `pygeohash`, and a brute-force region choice, none sharing code with Coffer. Fails, never skips, when Python or a
/// package is missing: CI installs them.
public enum PlacesOracle {
    public static func call(_ mode: String, _ request: [String: Any]) throws -> [String: Any] {
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/oracles/places_oracle.py").path
        let input = try JSONSerialization.data(withJSONObject: request)
        let result = try TestSupport.run("/usr/bin/env", ["python3", script, mode], input: Array(input))
        guard result.status == 0 else {
            throw TestSupport.OracleError.failed("places_oracle.py \(mode): \(result.stderr.suffix(600))")
        }
        guard let answer = try JSONSerialization.jsonObject(with: Data(result.standardOutput)) as? [String: Any] else {
            throw TestSupport.OracleError.failed("places_oracle.py \(mode) printed no JSON object")
        }
        return answer
    }
}
