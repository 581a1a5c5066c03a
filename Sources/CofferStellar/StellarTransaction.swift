import CofferModel

/// A value a signer is shown, as the transaction carries it.
public indirect enum StellarValue: Sendable, Equatable {
    /// A `G…` account or a `M…` muxed account.
    case account(String)
    /// An amount in stroops (one XLM or asset unit is 10,000,000).
    case amount(Int64)
    case asset(StellarAsset)
    case integer(Int64)
    case unsigned(UInt64)
    /// An XDR string: bytes, shown escaped where they are not printable.
    case text([UInt8])
    /// Opaque bytes (manage data values).
    case bytes([UInt8])
    /// A hash or an id shown in hex (claimable balances, liquidity pools).
    case hex([UInt8])
    case price(numerator: Int32, denominator: Int32)
    /// Account or trust line flags (`names` gives what each bit means).
    case flags(UInt32, names: [String])
    /// Unix seconds.
    case time(UInt64)
    case predicate(StellarPredicate)
    case list([StellarValue])
    case fields([StellarField])
    /// An optional field the transaction leaves out.
    case absent
}

/// A named part of an operation or a key.
public struct StellarField: Sendable, Equatable {
    /// snake_case, as in the JSON summary.
    public let name: String
    public let value: StellarValue
}

public indirect enum StellarAsset: Sendable, Equatable {
    case native
    /// An issued asset: its code (up to 12 characters) and issuer.
    case credit(code: [UInt8], issuer: String)
    /// A liquidity pool's shares, named by its two assets and fee (basis points).
    case pool(StellarAsset, StellarAsset, fee: Int32)
    /// A liquidity pool's shares, named by the pool's id.
    case poolID([UInt8])
}

/// When a claimable balance may be claimed.
public indirect enum StellarPredicate: Sendable, Equatable {
    case unconditional
    case and(StellarPredicate, StellarPredicate)
    case or(StellarPredicate, StellarPredicate)
    case not(StellarPredicate)
    case beforeAbsoluteTime(Int64)
    case beforeRelativeTime(Int64)
}

public struct StellarOperation: Sendable, Equatable {
    /// The XDR `OperationType`.
    public let type: Int32
    /// The operation's own source account, when it names one (else the transaction's).
    public let source: String?
    public let fields: [StellarField]

    /// snake_case, as the XDR names it (`path_payment_strict_receive`).
    public var name: String { StellarOperation.names[Int(type)].0 }
    /// In words ("Path payment (strict receive)").
    public var title: String { StellarOperation.names[Int(type)].1 }

    static let names: [(String, String)] = [
        ("create_account", "Create account"), ("payment", "Payment"),
        ("path_payment_strict_receive", "Path payment (strict receive)"), ("manage_sell_offer", "Manage sell offer"),
        ("create_passive_sell_offer", "Create passive sell offer"), ("set_options", "Set options"),
        ("change_trust", "Change trust"), ("allow_trust", "Allow trust"), ("account_merge", "Account merge"),
        ("inflation", "Inflation"), ("manage_data", "Manage data"), ("bump_sequence", "Bump sequence"),
        ("manage_buy_offer", "Manage buy offer"), ("path_payment_strict_send", "Path payment (strict send)"),
        ("create_claimable_balance", "Create claimable balance"), ("claim_claimable_balance", "Claim claimable balance"),
        ("begin_sponsoring_future_reserves", "Begin sponsoring future reserves"),
        ("end_sponsoring_future_reserves", "End sponsoring future reserves"), ("revoke_sponsorship", "Revoke sponsorship"),
        ("clawback", "Clawback"), ("clawback_claimable_balance", "Clawback claimable balance"),
        ("set_trust_line_flags", "Set trust line flags"), ("liquidity_pool_deposit", "Liquidity pool deposit"),
        ("liquidity_pool_withdraw", "Liquidity pool withdraw"), ("invoke_host_function", "Invoke host function"),
        ("extend_footprint_ttl", "Extend footprint TTL"), ("restore_footprint", "Restore footprint"),
    ]
}

/// What a transaction's validity depends on besides its signatures.
public struct StellarPreconditions: Sendable, Equatable {
    public var minTime: UInt64 = 0
    /// 0: no end.
    public var maxTime: UInt64 = 0
    public var ledgerBounds: (min: UInt32, max: UInt32)?
    public var minSequence: Int64?
    public var minSequenceAge: UInt64 = 0
    public var minSequenceLedgerGap: UInt32 = 0
    public var extraSigners: [String] = []

    public static func == (a: Self, b: Self) -> Bool {
        a.minTime == b.minTime && a.maxTime == b.maxTime && a.ledgerBounds?.min == b.ledgerBounds?.min
            && a.ledgerBounds?.max == b.ledgerBounds?.max && a.minSequence == b.minSequence
            && a.minSequenceAge == b.minSequenceAge && a.minSequenceLedgerGap == b.minSequenceLedgerGap
            && a.extraSigners == b.extraSigners
    }
}

public enum StellarMemo: Sendable, Equatable {
    case none
    case text([UInt8])
    case id(UInt64)
    case hash([UInt8])
    case `return`([UInt8])
}

/// A transaction (v0 or v1) as its envelope carries it.
public struct StellarTransaction: Sendable, Equatable {
    /// `G…` or `M…`.
    public let source: String
    /// The ed25519 key behind the source (a muxed account's too).
    public let sourceKey: [UInt8]
    /// The most it pays, in stroops, for all its operations.
    public let fee: UInt32
    public let sequence: Int64
    public let preconditions: StellarPreconditions
    public let memo: StellarMemo
    public let operations: [StellarOperation]
    /// The ed25519 keys behind the operations' own sources.
    public let operationSourceKeys: [[UInt8]]
}
