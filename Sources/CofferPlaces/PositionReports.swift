import CofferCrypto
import Foundation

/// One position from a receiver or a file, with the time it was taken when the source says.
public struct PositionFix: Sendable, Equatable {
    public var point: GeoPoint
    public var time: Date?

    public init(point: GeoPoint, time: Date?) {
        self.point = point
        self.time = time
    }
}

/// NMEA 0183 sentences from GPS receivers and logs: `RMC` (with status A) and `GGA` (with a fix) from any talker
/// (`$GP`, `$GN`, `$GL`…), checksum verified when present. Other sentences, void fixes and damaged lines give nil.
public enum NMEA {
    public static func parse(_ line: some StringProtocol) -> PositionFix? {
        var text = Substring(line).trimmingCharacters(in: .whitespacesAndNewlines)[...]
        guard text.first == "$" || text.first == "!", text.utf8.count <= 120 else { return nil }
        text = text.dropFirst()
        if let star = text.lastIndex(of: "*") {
            let checksum = text[text.index(after: star)...]
            guard checksum.count == 2, let expected = UInt8(checksum, radix: 16) else { return nil }
            let body = text[..<star]
            guard body.utf8.reduce(UInt8(0), ^) == expected else { return nil }
            text = body
        }
        let fields = text.split(separator: ",", omittingEmptySubsequences: false)
        guard let kind = fields.first, kind.count == 5 else { return nil }
        switch kind.suffix(3) {
        case "RMC":
            guard fields.count >= 10, fields[2] == "A",
                let point = coordinates(fields[3], fields[4], fields[5], fields[6])
            else { return nil }
            return PositionFix(point: point, time: time(day: fields[9], clock: fields[1]))
        case "GGA":
            guard fields.count >= 7, let quality = Int(fields[6]), quality > 0,
                let point = coordinates(fields[2], fields[3], fields[4], fields[5])
            else { return nil }
            return PositionFix(point: point, time: nil)
        default:
            return nil
        }
    }

    /// `ddmm.mmmm,N,dddmm.mmmm,E` as degrees.
    static func coordinates(_ latitude: Substring, _ north: Substring, _ longitude: Substring, _ east: Substring) -> GeoPoint? {
        guard let lat = degrees(latitude, degreeDigits: 2), let lon = degrees(longitude, degreeDigits: 3) else { return nil }
        let signedLatitude: Double
        switch north {
        case "N": signedLatitude = lat
        case "S": signedLatitude = -lat
        default: return nil
        }
        let signedLongitude: Double
        switch east {
        case "E": signedLongitude = lon
        case "W": signedLongitude = -lon
        default: return nil
        }
        return GeoPoint(latitude: signedLatitude, longitude: signedLongitude)
    }

    static func degrees(_ text: Substring, degreeDigits: Int) -> Double? {
        guard text.count > degreeDigits + 1, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }),
            let whole = Double(text.prefix(degreeDigits)), let minutes = Double(text.dropFirst(degreeDigits)), minutes < 60
        else { return nil }
        return whole + minutes / 60
    }

    /// RMC's `ddmmyy` and `hhmmss.ss`, in UTC.
    static func time(day: Substring, clock: Substring) -> Date? {
        guard day.count == 6, clock.count >= 6, let d = Int(day.prefix(2)), let m = Int(day.dropFirst(2).prefix(2)),
            let y = Int(day.suffix(2)), let hh = Int(clock.prefix(2)), let mm = Int(clock.dropFirst(2).prefix(2)),
            let ss = Double(clock.dropFirst(4))
        else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (2000 + y, m, d)
        (components.hour, components.minute, components.second) = (hh, mm, Int(ss))
        guard let date = components.date else { return nil }
        return date.addingTimeInterval(ss - ss.rounded(.down))
    }
}

/// gpsd's JSON protocol: `TPV` reports with a 2D or 3D fix give a position; everything else (VERSION, DEVICES,
/// WATCH, SKY, fixes without mode ≥ 2) gives nil.
public enum GPSDReport {
    /// What a client sends to receive reports as JSON.
    public static let watchCommand = #"?WATCH={"enable":true,"json":true};"# + "\n"

    public static func parse(_ line: some StringProtocol) -> PositionFix? {
        guard line.utf8.count <= 64 * 1024, let report = JSONValue.parse(Array(line.utf8)),
            report["class"]?.stringValue == "TPV", let mode = report["mode"]?.intValue, mode >= 2,
            let lat = report["lat"]?.doubleValue, let lon = report["lon"]?.doubleValue,
            let point = GeoPoint(latitude: lat, longitude: lon)
        else { return nil }
        let time = report["time"]?.stringValue.flatMap(Self.time)
        return PositionFix(point: point, time: time)
    }

    /// gpsd writes `2026-11-24T12:00:15.000Z`; fractional seconds are optional.
    static func time(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }
}

/// A line of a follow file: NMEA, or plain `lat,lon` (comments after `#` and blank lines give nil).
public enum PositionLine {
    public static func parse(_ line: some StringProtocol) -> PositionFix? {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("$") || trimmed.hasPrefix("!") { return NMEA.parse(trimmed) }
        if trimmed.hasPrefix("{") { return GPSDReport.parse(trimmed) }
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), let point = GeoPoint(parsing: trimmed) else { return nil }
        return PositionFix(point: point, time: nil)
    }
}
