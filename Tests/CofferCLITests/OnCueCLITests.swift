import CofferTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer places`, `near`, `regions` and `cue` as a user runs them: places imported into the vault, cards linked to
/// networks, and the fixture track (Fixtures/track.*) replayed from a file, through a real gpsd (gpsfake), and with
/// a notification server on a private session bus. Expected arrivals and refreshes come from make_track.py.
@Suite("on cue, from the command line", .serialized, .offCooperativePool)
struct OnCueCLITests {
    static let fixtures = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferPlacesTests/Fixtures")

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    struct Track: Decodable {
        struct Entry: Decodable {
            let fix: Int
            let store: String
            let network: String
        }
        let entries: [Entry]
        let refreshes: [Int]
    }

    static func track() throws -> Track {
        try JSONDecoder().decode(Track.self, from: Data(contentsOf: fixtures.appendingPathComponent("track_expected.json")))
    }

    /// A vault with CardOnCue's sample places imported and cards for Costco and Whole Foods (none for Kohl's).
    static func preparedCLI(extraEnvironment: [String: String] = [:]) throws -> CLI {
        let cli = try CLI(extraEnvironment: extraEnvironment)
        try cli.ok(["init"])
        try cli.ok(["places", "import", fixture("networks.csv")])
        for network in ["costco", "whole-foods", "kohls", "sfpl"] {
            try cli.ok(["places", "import", "--network", network, fixture("\(network).csv")])
        }
        try cli.ok(["add", "card", "Costco", "--symbology", "code128", "--network", "costco"], input: "111222333\n")
        try cli.ok(["add", "card", "Whole Foods", "--symbology", "code128", "--network", "whole-foods"], input: "5555\n")
        return cli
    }

    static func events(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// Arrivals and refreshes (0-based fix indexes, as track_expected.json counts) of a `cue --json` run.
    static func summary(_ events: [[String: Any]]) -> (arrivals: [(Int, String)], refreshes: [Int]) {
        let arrivals = events.filter { $0["event"] as? String == "arrived" }.map { (($0["fix"] as? Int ?? 0) - 1, $0["region"] as? String ?? "") }
        let refreshes = events.filter { $0["event"] as? String == "refreshed" }.map { ($0["fix"] as? Int ?? 0) - 1 }
        return (arrivals, refreshes)
    }

    @Test("near, regions and networks on imported places; bad positions are refused in one line")
    func nearAndRegions() throws {
        let cli = try Self.preparedCLI()
        let near = try #require(
            try JSONSerialization.jsonObject(with: Data(try cli.ok(["near", "--at", "37.7749,-122.4194", "--json"]).standardOutput)) as? [[String: Any]])
        #expect(near.map { $0["card"] as? String } == ["Costco", "Whole Foods"])
        #expect(near.first?["distance_meters"] as? Double == 0 && near.first?["store_id"] as? String == "loc_costco_001")
        #expect(try cli.ok(["near", "--at", "-", "--within", "500m"], input: "37.7749,-122.4194\n").stdout.hasPrefix("Costco"))

        let regions = try #require(
            try JSONSerialization.jsonObject(with: Data(try cli.ok(["regions", "--at", "37.7749,-122.4194", "--json"]).standardOutput)) as? [[String: Any]])
        let priorities = regions.map { $0["priority"] as? Int ?? 0 }
        // CardOnCue's sample places within 50 km of Costco SF: fewer than the limit of 20, so all of them.
        #expect((13...19).contains(regions.count) && priorities == priorities.sorted(), "\(regions.count) regions")
        #expect(regions.filter { $0["priority"] as? Int == 1 }.allSatisfy { ["costco", "whole-foods"].contains($0["network_id"] as? String ?? "") })
        #expect(regions.contains { $0["network_id"] as? String == "kohls" && $0["priority"] as? Int == 2 })
        #expect(try cli.ok(["regions", "--at", "37.7749,-122.4194", "--max", "3", "--json"]).stdout.components(separatedBy: "\"id\"").count == 4)
        #expect(try cli.ok(["networks", "--category", "library"]).stdout.hasPrefix("sfpl"))

        for (arguments, message) in [
            (["near", "--at", "91,0"], "the position must be LAT,LON"), (["near", "--at", "nan,0"], "the position must be LAT,LON"),
            (["regions", "--at", "37.7,-122.4", "--max", "101"], "--max must be 1 to 100"),
            (["near", "--at", "37.7,-122.4", "--within", "200km"], "--within must be"),
            (["cue"], "give one position source"), (["cue", "--follow", "-", "--gpsd", "localhost:1"], "give one position source"),
        ] {
            let result = try cli.run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(message) && result.stderr.hasPrefix("coffer: error:"), "\(arguments): \(result.stderr)")
        }
    }

    @Test("with no places at all, near, regions and cue say what to do")
    func noPlaces() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        for arguments in [["near", "--at", "37.7749,-122.4194"], ["regions", "--at", "37.7749,-122.4194"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 66 && result.stderr.contains("no places cover this position"), "\(arguments)")
            #expect(result.stderr.contains("coffer places from URL"))
        }
        let cue = try cli.ok(["cue", "--follow", "-", "--no-notify"], input: "37.7749,-122.4194\n37.775,-122.4194\n")
        #expect(cue.stderr.components(separatedBy: "no places cover this area").count == 2, "said once per cell: \(cue.stderr)")
    }

    @Test("cue --follow: each store with a card surfaces once per entry, Kohl's never, regions refresh by the rules")
    func followTrack() throws {
        let cli = try Self.preparedCLI()
        let expected = try Self.track()
        let run = try cli.ok(["cue", "--follow", Self.fixture("track.txt"), "--json", "--no-notify"])
        let (arrivals, refreshes) = Self.summary(try Self.events(run.stdout))
        let wanted = expected.entries.filter { $0.network != "kohls" }
        #expect(arrivals.map(\.0) == wanted.map(\.fix) && arrivals.map(\.1) == wanted.map(\.store))
        #expect(refreshes == expected.refreshes)
        // NMEA from the same track gives the same arrivals (two sentences per fix: RMC then GGA).
        let nmea = Self.summary(
            try Self.events(
                try cli.ok(
                    ["cue", "--follow", "-", "--json", "--no-notify"],
                    input: try String(contentsOfFile: Self.fixture("track.nmea"), encoding: .utf8)
                ).stdout))
        #expect(nmea.arrivals.map { $0.0 / 2 } == wanted.map(\.fix) && nmea.arrivals.map(\.1) == wanted.map(\.store))
        #expect(nmea.refreshes.map { $0 / 2 } == expected.refreshes, "GGA fixes carry no time and must not look like a clock jump")
        // A first fix without a time (as gpsd's first report can be) is on the wall clock; when the source's clock
        // starts (hours away from it), that is not six hours passing.
        let first = try #require(try String(contentsOfFile: Self.fixture("track.txt"), encoding: .utf8).split(separator: "\n").dropFirst().first)
        let mixed = Self.summary(
            try Self.events(
                try cli.ok(
                    ["cue", "--follow", "-", "--json", "--no-notify"],
                    input: "\(first)\n" + (try String(contentsOfFile: Self.fixture("track.nmea"), encoding: .utf8))
                ).stdout))
        #expect(mixed.refreshes == [0] + expected.refreshes.dropFirst().map { 1 + 2 * $0 })
        // The preferred card comes first; without a card for a network, nothing.
        try cli.ok(["add", "card", "Costco Family", "--symbology", "code128", "--network", "costco"], input: "999\n")
        try cli.ok(["edit", "Costco Family", "--prefer-at", "costco"])
        try cli.ok(["places", "clear"])
        let preferred = try Self.events(try cli.ok(["cue", "--follow", Self.fixture("track.txt"), "--json", "--no-notify"]).stdout)
        #expect(preferred.first { $0["event"] as? String == "arrived" }?["card"] as? String == "Costco Family")
        // A plain-text run says where and which card, and nothing about Kohl's.
        try cli.ok(["places", "clear"])
        let text = try cli.ok(["cue", "--follow", Self.fixture("track.txt"), "--no-notify"]).stdout
        #expect(text.contains("Costco San Francisco (Costco): Costco Family") && !text.contains("Kohl"))
    }

    @Test("arrivals become desktop notifications on a session bus (a stand-in notification server)")
    func notifications() throws {
        let cli = try Self.preparedCLI()
        let directory = try TestSupport.temporaryDirectory("dbus")
        // A private session bus, as dbus-run-session makes one, owned by this test so that it can always be stopped.
        let bus = Process()
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--session", "--nofork", "--address=unix:path=\(directory)/bus", "--print-address=1"]
        let busOutput = Pipe()
        bus.standardOutput = busOutput
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        defer { kill(bus.processIdentifier, SIGKILL) }
        _ = busOutput.fileHandleForReading.availableData
        var environment = cli.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory)/bus"
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "python3", TestSupport.repositoryRoot.path + "/Tests/oracles/fake_notifications.py", "\(directory)/notes.jsonl", "\(directory)/ready",
        ]
        server.environment = environment
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL) }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: "\(directory)/ready") { Thread.sleep(forTimeInterval: 0.1) }
        try #require(FileManager.default.fileExists(atPath: "\(directory)/ready"), "the stand-in notification server did not start")
        let result = try TestSupport.run(CLI.binary, ["cue", "--follow", Self.fixture("track.txt")], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        // Without a bus, the same run only prints.
        var noBus = cli.environment
        noBus["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory)/absent"
        try cli.ok(["places", "clear"])
        #expect(try TestSupport.run(CLI.binary, ["cue", "--follow", Self.fixture("track.txt")], environment: noBus).stdout.contains("Costco"))
        let notes = try String(contentsOfFile: "\(directory)/notes.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(
            notes.map { $0["summary"] as? String } == [
                "You're near Costco San Francisco (Costco)", "You're near Whole Foods Market SoMa (Whole Foods Market)",
                "You're near Costco San Francisco (Costco)",
            ])
        #expect(notes.allSatisfy { $0["app"] as? String == "Coffer" && ($0["body"] as? String ?? "").contains("coffer show") })
        #expect(notes.last?["replaces"] as? Int == 2, "each notification replaces the previous one")
    }

    @Test("cue --gpsd against a real gpsd replaying the track (gpsfake); SIGTERM stops it cleanly")
    func gpsd() throws {
        let cli = try Self.preparedCLI()
        let expected = try Self.track()
        let directory = try TestSupport.temporaryDirectory("gpsfake")
        // gpsd spends the first sentences detecting the device: a lead-in of the first fix, 30 s earlier, absorbs it.
        let nmea = try String(contentsOfFile: Self.fixture("track.nmea"), encoding: .utf8)
        let first = nmea.split(whereSeparator: \.isNewline).prefix(2).map(String.init)
        var leadIn = ""
        for second in 0..<30 {
            for sentence in first {
                let retimed = sentence.replacingOccurrences(of: "120000.00", with: String(format: "1159%02d.00", 30 + second))
                let body = retimed.dropFirst().prefix { $0 != "*" }
                leadIn += "$\(body)*" + String(format: "%02X", body.utf8.reduce(UInt8(0), ^)) + "\r\n"
            }
        }
        try (leadIn + nmea).write(toFile: "\(directory)/track.nmea", atomically: true, encoding: .utf8)
        let port = Int.random(in: 30_000...40_000)
        let gpsfake = Process()
        gpsfake.executableURL = URL(fileURLWithPath: "/usr/bin/gpsfake")
        gpsfake.arguments = ["-q", "-1", "-P", "\(port)", "-c", "0.1", "\(directory)/track.nmea"]
        gpsfake.standardOutput = FileHandle.nullDevice
        gpsfake.standardError = FileHandle.nullDevice
        try gpsfake.run()
        defer {
            kill(gpsfake.processIdentifier, SIGKILL)
            _ = try? TestSupport.run("/usr/bin/pkill", ["-KILL", "-f", "gpsd.*\(port)"])
        }
        var listening = false
        for _ in 0..<100 where !listening {
            listening = try TestSupport.run("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).status == 0
            if !listening { Thread.sleep(forTimeInterval: 0.1) }
        }
        try #require(listening, "gpsfake's gpsd did not start")
        let (cue, output) = try cli.start(["cue", "--gpsd", "127.0.0.1:\(port)", "--json", "--no-notify"])
        var collected = Data()
        let deadline = Date().addingTimeInterval(90)
        let wanted = expected.entries.filter { $0.network != "kohls" }
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.5)
            collected += output.fileHandleForReading.availableDataNonBlocking()
            let text = String(decoding: collected, as: UTF8.self)
            // Complete lines only: the last may still be arriving.
            let lines = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
            if Self.summary((try? Self.events(lines)) ?? []).arrivals.count >= wanted.count { break }
        }
        kill(cue.processIdentifier, SIGTERM)
        cue.waitUntilExit()
        collected += output.fileHandleForReading.readDataToEndOfFile()
        #expect(cue.terminationReason == .exit && cue.terminationStatus == 0, "SIGTERM ends cue cleanly")
        let (arrivals, refreshes) = Self.summary(try Self.events(String(decoding: collected, as: UTF8.self)))
        #expect(arrivals.map(\.1) == wanted.map(\.store), "\(arrivals)")
        // Fix numbers count gpsd's reports, so they shift by the lead-in gpsd kept; their gaps are the track's.
        let offsets = zip(arrivals.map(\.0), wanted.map(\.fix)).map { $0 - $1 }
        #expect(Set(offsets).count == 1, "arrivals at the track's fixes, whatever the lead-in: \(offsets)")
        #expect(refreshes.count == expected.refreshes.count, "refreshes \(refreshes) for \(expected.refreshes)")
    }

    @Test("cue says which source failed; the vault keeps no position in the clear")
    func failures() throws {
        let cli = try Self.preparedCLI()
        let unreachable = try cli.run(["cue", "--gpsd", "127.0.0.1:1"])
        #expect(unreachable.status == 69 && unreachable.stderr.contains("cannot reach gpsd at 127.0.0.1:1"))
        #expect(unreachable.stderr.contains("hint:"))
        let missing = try cli.run(["cue", "--follow", "/nonexistent/track.txt"])
        #expect(missing.status == 69 && missing.stderr.contains("cannot read the file /nonexistent/track.txt"))
        let canary = "37.7759123,-122.4189123"
        try cli.ok(["cue", "--follow", "-", "--no-notify"], input: "\(canary)\n37.7749,-122.4194\n")
        try cli.ok(["near", "--at", "-"], input: canary)
        var bytes = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: cli.vaultDirectory) {
            bytes += try Data(contentsOf: URL(fileURLWithPath: "\(cli.vaultDirectory)/\(name)"))
        }
        for marker in ["37.7759123", "122.4189123", "37.7749", "loc_costco_001", "Costco San Francisco", "9q8y"] {
            #expect(CanaryScan.encodings(of: marker, in: bytes).isEmpty, "\(marker) in the vault's files")
        }
    }

    /// 25 cafés of one chain within 250 m and the gym 300 m south: with CardOnCue's order all 20 regions were cafés,
    /// and walking 300 m (under the 500 m refresh distance) to the gym surfaced nothing.
    @Test("a dense area: 25 nearer cafés of one chain do not crowd out the gym 300 m away, whose card surfaces on arrival")
    func crowdedArea() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let directory = try TestSupport.temporaryDirectory("crowded")
        let start = (latitude: 37.7749, longitude: -122.4194)
        func point(north: Double, east: Double = 0) -> String {
            String(format: "%.7f,%.7f", start.latitude + north / 111_194.93, start.longitude + east / 87_950)
        }
        try "id,name,canonical_names,category,is_large_area,default_radius_meters,tags\ncafe,Café,,other,false,30,\ngym,Gym,,other,false,60,\n"
            .write(toFile: directory + "/networks.csv", atomically: true, encoding: .utf8)
        let cafes = (0..<25).map { "Café \($0),,\(point(north: Double($0 * 10), east: Double($0 % 5) * 5)),," }
        try (["name,address,lat,lon,radius,phone"] + cafes).joined(separator: "\n")
            .write(toFile: directory + "/cafe.csv", atomically: true, encoding: .utf8)
        try "name,address,lat,lon,radius,phone\nGym South,,\(point(north: -300)),,\n"
            .write(toFile: directory + "/gym.csv", atomically: true, encoding: .utf8)
        try cli.ok(["places", "import", directory + "/networks.csv"])
        try cli.ok(["places", "import", "--network", "cafe", directory + "/cafe.csv"])
        try cli.ok(["places", "import", "--network", "gym", directory + "/gym.csv"])
        try cli.ok(["add", "card", "Café Rewards", "--network", "cafe"], input: "CAFE-0042\n")
        try cli.ok(["add", "card", "Gym Pass", "--network", "gym"], input: "GYM-0042\n")

        let regions = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try cli.ok(["regions", "--at", point(north: 0), "--json"]).standardOutput)) as? [[String: Any]])
        #expect(regions.count == 20 && regions.contains { $0["network_id"] as? String == "gym" })
        // A walk south from the first café to the gym, 20 m a fix: no refresh after the first, and the gym surfaces.
        let walk = (0...16).map { point(north: -Double($0) * 20) }.joined(separator: "\n") + "\n"
        let run = try cli.ok(["cue", "--follow", "-", "--json", "--no-notify"], input: walk)
        let (arrivals, refreshes) = Self.summary(try Self.events(run.stdout))
        #expect(refreshes == [0])
        // The cafés within 30 m of the start surface at once; the gym when the walk reaches it.
        #expect(arrivals.map(\.1) == ["loc_cafe_001", "loc_cafe_002", "loc_cafe_003", "loc_gym_001"], "\(arrivals)")
        #expect(arrivals.last?.0 == 13, "the gym's 60 m circle is reached 260 m south")
    }
}

extension OnCueCLITests {
    @Test("through a server's tiles: no position, network id or card reaches its database, WAL or trace log, nor an address")
    func serverPrivacy() throws {
        let data = try TestSupport.temporaryDirectory("places-server")
        let server = SyncCLITests.serverBinary
        let serverEnvironment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"]
        for arguments in [
            [Self.fixture("networks_wikidata.csv")], ["--network", "costco", Self.fixture("costco.csv")],
            ["--network", "whole-foods", Self.fixture("whole-foods.csv")], ["--network", "kohls", Self.fixture("kohls.csv")],
        ] {
            let imported = try TestSupport.run(server, ["places", "import", "--data", data] + arguments, environment: serverEnvironment)
            try #require(imported.status == 0, "\(imported.stderr)")
        }
        let port = TestSupport.unusedPort()
        let logPath = "\(data)/trace.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: server)
        process.arguments = ["--data", data, "--port", "\(port)"]
        process.environment = serverEnvironment.merging(["COFFER_LOG": "trace"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        try process.run()
        defer { kill(process.processIdentifier, SIGKILL) }
        var up = false
        for _ in 0..<100 where !up {
            up = try TestSupport.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/health"]).stdout == "200"
            if !up { Thread.sleep(forTimeInterval: 0.1) }
        }
        try #require(up, "coffer-server did not start")

        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["places", "from", "http://127.0.0.1:\(port)"])
        func status() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["places", "status", "--json"]).standardOutput)) as? [String: Any])
        }
        // The server's directory counts before any tile is fetched.
        #expect(try status()["networks"] as? Int == 5 && status()["cached_tiles"] as? Int == 0)
        try cli.ok(["add", "card", "CANARYCARD-4242", "--symbology", "code128", "--network", "costco", "--network", "canary-net-4242"], input: "4242\n")
        let canary = (latitude: "37.7761234", longitude: "-122.4181234")
        let near = try cli.ok(["near", "--at", "-", "--json"], input: "\(canary.latitude),\(canary.longitude)")
        #expect(near.stdout.contains("CANARYCARD-4242"), "the tile served the card's stores")
        let cached = try status()
        #expect(cached["cached_tiles"] as? Int == 1 && (cached["cached_locations"] as? Int ?? 0) > 0 && (cached["cached_bytes"] as? Int ?? 0) >= 16_384)
        #expect(try cli.ok(["places", "status"]).stdout.contains("Cached:    1 tile, "))
        try cli.ok(["regions", "--at", "-"], input: "\(canary.latitude),\(canary.longitude)")
        let track = try String(contentsOfFile: Self.fixture("track.txt"), encoding: .utf8)
        let cue = try cli.ok(["cue", "--follow", "-", "--no-notify"], input: "\(canary.latitude),\(canary.longitude)\n" + track)
        #expect(cue.stdout.contains("CANARYCARD-4242"))
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()

        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        let requests = log.split(separator: "\n").filter { $0.contains("route=") }
        #expect(requests.contains { $0.contains("route=/v1/places/tiles/{cell}") }, "the scan must see the tile request it checks")
        var files = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: data) where name.hasPrefix("server.sqlite") {
            files += try Data(contentsOf: URL(fileURLWithPath: "\(data)/\(name)"))
        }
        #expect(files.count > 4096)
        let fine = "9q8yy"  // the canary's geohash-5: finer than the cell a tile names
        for marker in [canary.latitude, String(canary.longitude.dropFirst()), "canary-net-4242", "CANARYCARD", fine] {
            #expect(CanaryScan.encodings(of: marker, in: files).isEmpty, "\(marker) in the server's database")
            #expect(CanaryScan.encodings(of: marker, in: Data(log.utf8)).isEmpty, "\(marker) in the server's log")
        }
        #expect(!requests.contains { $0.contains("127.0.0.1") }, "no client address in the server's request lines")
    }
}

extension FileHandle {
    /// What can be read now without blocking.
    func availableDataNonBlocking() -> Data {
        let descriptor = fileDescriptor
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            result += buffer[0..<count]
        }
        return result
    }
}
