import CofferKeystore
import CofferTestSupport
import Foundation
import Testing

@testable import CofferKit
@testable import CofferVault

@Suite("Device records")
struct DeviceRecordTests {
    private let vaultID = UUID()
    private let slot = UUID(uuidString: "8F1D2C3B-4A5E-4F60-8172-93A4B5C6D7E8")!
    private let dead = UUID(uuidString: "01234567-89ab-4cde-8f01-23456789abcd")!

    private func records(holding text: String) throws -> DeviceRecords {
        let records = DeviceRecords(directory: try TestSupport.temporaryDirectory("device-records"))
        try FileManager.default.createDirectory(atPath: records.directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: records.path(vaultID)))
        return records
    }

    @Test("Every record written reads back as written")
    func roundTrip() throws {
        let directory = try TestSupport.temporaryDirectory("device-records")
        let records = DeviceRecords(directory: directory)
        for kind in KeystoreKind.allCases {
            for record in [
                DeviceRecords.Record(keystore: kind), .init(keystore: kind, previous: .file),
                .init(keystore: kind, slot: slot), .init(keystore: kind, previous: .tpm2, slot: slot, replaced: [dead, slot]),
            ] {
                try records.record(record.keystore, previous: record.previous, for: vaultID)
                if let slot = record.slot { try records.recordSlot(slot, for: vaultID) }
                let read = try #require(try records.record(for: vaultID))
                #expect(read.keystore == record.keystore && read.previous == record.previous)
                if record.slot != nil { #expect(read.slot == record.slot) }
                try FileManager.default.removeItem(atPath: records.path(vaultID))
            }
        }
        #expect(try records.record(for: vaultID) == nil)
    }

    @Test("Records from other versions and writers: names not known ignored, null as absent, ids in either case")
    func lenientReading() throws {
        let text = """
            \u{FEFF}{ "keystore" : "tpm2", "previous": null, "slot": "\(slot.uuidString)",
              "replaced": ["\(dead.uuidString.lowercased())"], "written-by": {"version": [2, 0]} }

            """
        let record = try #require(try records(holding: text).record(for: vaultID))
        #expect(record == DeviceRecords.Record(keystore: .tpm2, previous: nil, slot: slot, replaced: [dead]))
    }

    @Test(
        "A damaged record is refused, not taken for a store",
        arguments: [
            "", "{}", "[]", "null", "{\"keystore\":\"vault\"}", "{\"keystore\":7}", "{\"keystore\":\"file\",\"previous\":\"nowhere\"}",
            "{\"keystore\":\"file\",\"slot\":\"not-a-slot\"}", "{\"keystore\":\"file\",\"replaced\":[\"8F1D2C3B\"]}",
            "{\"keystore\":\"file\",\"replaced\":\"8F1D2C3B-4A5E-4F60-8172-93A4B5C6D7E8\"}", "{\"keystore\":\"file\"", "{\"keystore\":\"file\"} x",
        ])
    func damaged(_ text: String) throws {
        let records = try records(holding: text)
        let error = #expect(throws: VaultError.self) { _ = try records.keystore(for: vaultID) }
        guard case .tampered(let what) = error else {
            Issue.record("expected a tampered record, got \(String(describing: error))")
            return
        }
        #expect(what == "the device record \(records.path(vaultID))")
    }
}
