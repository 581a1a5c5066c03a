import CofferCrypto
import CofferModel
import Foundation

/// Reads a FidMe export as Catima imports it (`FidmeImporter`): a zip holding `loyalty_programs.csv`, or that CSV
/// itself. The CSV is RFC 4180 with `;` between fields and a header naming `Retailer`, `Program`, `Added At`,
/// `Reference`, `Firstname` and `Lastname`.
///
/// Each row becomes a card named by its retailer, holding `Reference` as its number. FidMe does not export the
/// barcode type, so the cards have none (shown by their number); program, date added and holder go into the notes,
/// one per line, as Catima does. FidMe empties `Reference` when a card expires; such rows are reported, not imported.
/// Password-protected zips are refused: unzip the export and import `loyalty_programs.csv`.
public enum FidMeImporter: Importer {
    public static let formatName = "fidme"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        var csv = data
        if ZipArchive.looksLikeZip(data) {
            let archive: ZipArchive
            do {
                archive = try ZipArchive(data)
            } catch {
                if error == .malformedFile("encrypted ZIP entries are not supported") {
                    throw .unsupportedVersion("a password-protected FidMe zip (unzip it and import loyalty_programs.csv)")
                }
                throw error
            }
            guard let entry = archive.entry(named: "loyalty_programs.csv") else {
                throw .malformedFile("the zip holds no loyalty_programs.csv")
            }
            csv = try archive.contents(of: entry)
        }
        let body = csv.starts(with: [0xEF, 0xBB, 0xBF]) ? csv.dropFirst(3) : csv[...]
        guard String(validating: body, as: UTF8.self) != nil else { throw .malformedFile("the CSV is not UTF-8") }
        let records = try ImportCSV.records(body, delimiter: UInt8(ascii: ";"))
        guard let header = records.first?.fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }),
            let retailerColumn = header.firstIndex(of: "retailer"), let referenceColumn = header.firstIndex(of: "reference")
        else {
            throw .malformedFile("the CSV has no Retailer and Reference columns")
        }
        func column(_ name: String, _ fields: [String]) -> String? {
            header.firstIndex(of: name).flatMap { fields.indices.contains($0) ? OTPImport.nonEmpty(fields[$0]) : nil }
        }
        var result = ImportResult()
        for record in records.dropFirst() where record.fields != [""] {
            let fields = record.fields
            let retailer = fields.indices.contains(retailerColumn) ? OTPImport.nonEmpty(fields[retailerColumn]) : nil
            let name = retailer ?? "line \(record.line)"
            guard fields.count == header.count else {
                result.problems.append(
                    ImportProblem(
                        entry: name, reason: "the row has \(fields.count) fields, the header has \(header.count)"))
                continue
            }
            guard let retailer else {
                result.problems.append(ImportProblem(entry: name, reason: "no retailer"))
                continue
            }
            guard let reference = OTPImport.nonEmpty(fields[referenceColumn]) else {
                result.problems.append(ImportProblem(entry: name, reason: "no card number (FidMe removes it when a card expires)"))
                continue
            }
            let holder = [column("firstname", fields), column("lastname", fields)].compactMap { $0 }.joined(separator: " ")
            let notes = [column("program", fields), column("added at", fields), holder.isEmpty ? nil : holder]
                .compactMap { $0 }.joined(separator: "\n")
            do {
                result.items.append(
                    .card(
                        try Card(
                            name: retailer, symbology: nil, payload: Array(reference.utf8), notes: notes.isEmpty ? nil : notes)))
            } catch {
                result.problems.append(ImportProblem(entry: name, reason: error.description))
            }
        }
        return result
    }
}
