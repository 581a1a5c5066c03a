import Foundation

/// Structured private text: a contact, KYC details, or free fields.
public struct Note: Sendable, Equatable {
    /// One labelled value, e.g. "IBAN" → "…".
    public struct Field: Sendable, Equatable, Codable {
        public var label: String
        public var value: String

        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    /// What the fields describe; the CLI offers field templates for contacts and KYC.
    public enum Template: String, Codable, Sendable, CaseIterable {
        case free, contact, kyc
    }

    public var name: String
    public var template: Template
    public var fields: [Field]
    public var text: String?
    public var tags: [String]

    public init(name: String, template: Template = .free, fields: [Field] = [], text: String? = nil, tags: [String] = []) throws(ModelError) {
        self.name = name
        self.template = template
        self.fields = fields
        self.text = text
        self.tags = tags
        try validate()
    }

    public mutating func validate() throws(ModelError) {
        name = try Rules.name(name)
        guard fields.count <= 200 else { throw .tooMany(field: "fields", limit: 200) }
        for index in fields.indices {
            fields[index].label = try Rules.name(fields[index].label, field: "field label", limit: 100)
            guard fields[index].value.count <= 8192 else { throw .tooLong(field: "field value", limit: 8192) }
        }
        text = try Rules.optionalText(text, field: "text", limit: 65_536)
        tags = try Rules.labels(tags, field: "tags")
        guard !fields.isEmpty || text != nil else { throw .emptyField("note (give fields or text)") }
    }

    /// Suggested field labels per template.
    public static func suggestedLabels(for template: Template) -> [String] {
        switch template {
        case .free: return []
        case .contact: return ["Name", "Stellar address", "Email", "Phone"]
        case .kyc: return ["First name", "Last name", "Date of birth", "Address", "ID document", "ID number"]
        }
    }
}
