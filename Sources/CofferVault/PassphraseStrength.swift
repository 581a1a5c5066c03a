import Foundation

/// An estimate of how many guesses a passphrase takes, in bits, for the warning and the floor a new vault or account
/// passphrase meets. It follows zxcvbn's idea at a smaller scale: a passphrase is split into words, runs and single
/// characters, each priced by the cheapest way an attacker's guesser finds it (a common password by its rank, a word
/// like a dictionary word, a repeat or an alphabet or keyboard run for almost nothing, anything else by the size of the
/// alphabets it uses). It errs low: random words are priced as Diceware words (12.9 bits each) whether or not they
/// are in a dictionary.
public struct PassphraseStrength: Sendable, Equatable, CustomStringConvertible {
    /// Below this, a new passphrase is refused unless the user insists: on a stolen vault file it falls to one GPU
    /// within days, even through PBKDF2 at 600,000 iterations.
    public static let floorBits = 40
    /// From here on a passphrase is fair; below it, weak (a warning).
    public static let fairBits = 56
    /// From here on, strong.
    public static let strongBits = 72

    public enum Rating: String, Sendable, Comparable {
        case tooWeak = "too weak"
        case weak
        case fair
        case strong

        public static func < (lhs: Rating, rhs: Rating) -> Bool {
            let order: [Rating] = [.tooWeak, .weak, .fair, .strong]
            return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
        }
    }

    /// What made the estimate low, for advice. Never the passphrase or a part of it.
    public enum Weakness: String, Sendable {
        case commonPassword = "it is one of the most common passwords"
        case repeated = "it repeats characters or a pattern"
        case sequence = "it follows the alphabet, digits or the keyboard"
        case short = "it is short"
    }

    /// Estimated guesses, as a base-2 logarithm, rounded down.
    public let bits: Int
    public let weakness: Weakness?

    public var rating: Rating {
        switch bits {
        case ..<Self.floorBits: return .tooWeak
        case ..<Self.fairBits: return .weak
        case ..<Self.strongBits: return .fair
        default: return .strong
        }
    }

    public var description: String { "about \(bits) bit\(bits == 1 ? "" : "s") (\(rating.rawValue))" }

    public init(estimating passphrase: String) {
        let characters = Array(passphrase.precomposedStringWithCanonicalMapping)
        var total = 0.0
        var weakest: Weakness?
        let whole = Self.guessesAsCommon(characters)
        if let whole {
            total = whole
            weakest = .commonPassword
        } else if let unit = Self.repeatedUnit(characters) {
            // "abcabcabc" costs about what "abc" costs, plus the count.
            total = Self.priced(unit).bits + log2(Double(characters.count / unit.count))
            weakest = .repeated
        } else {
            let priced = Self.priced(characters)
            total = priced.bits
            weakest = priced.weakness
        }
        if weakest == nil, characters.count < 12, total < Double(Self.fairBits) { weakest = .short }
        bits = max(0, Int(total.rounded(.down)))
        weakness = Int(total) < Self.fairBits ? weakest : nil
    }

    // MARK: - Pricing

    private static func priced(_ characters: [Character]) -> (bits: Double, weakness: Weakness?) {
        let pool = Double(alphabetSize(of: characters))
        let perCharacter = log2(max(pool, 2))
        var bits = 0.0
        var cheapSteps = 0
        var weakness: Weakness?
        var index = 0
        var afterWord = false
        while index < characters.count {
            if let word = wordLikeRun(characters, from: index) {
                bits += word.bits
                if word.common { weakness = .commonPassword }
                index += word.length
                afterWord = true
                continue
            }
            let character = characters[index]
            // Words are joined by the few separators people use: a guesser tries each.
            if afterWord, separators.contains(character), index + 1 < characters.count, characters[index + 1].isLetter || characters[index + 1].isNumber {
                bits += 2
                index += 1
                afterWord = false
                continue
            }
            afterWord = false
            if let digits = digitRun(characters, from: index) {
                bits += digits.bits
                index += digits.length
                continue
            }
            if index > 0 {
                let previous = characters[index - 1]
                if character == previous {
                    bits += 1
                    cheapSteps += 1
                    if cheapSteps >= 2 { weakness = weakness ?? .repeated }
                    index += 1
                    continue
                }
                if follows(previous, character) {
                    bits += 1.5
                    cheapSteps += 1
                    if cheapSteps >= 2 { weakness = weakness ?? .sequence }
                    index += 1
                    continue
                }
            }
            cheapSteps = 0
            bits += perCharacter
            index += 1
        }
        return (bits, weakness)
    }

    private static let separators: Set<Character> = [" ", "-", "_", ".", ",", "+"]

    /// Digits from `start`: a year of the last two centuries costs what guessing its year costs, other
    /// digits the ten each (less along a run, see `follows`).
    private static func digitRun(_ characters: [Character], from start: Int) -> (length: Int, bits: Double)? {
        var end = start
        while end < characters.count, characters[end].isASCII, characters[end].isNumber { end += 1 }
        guard end > start else { return nil }
        let run = Array(characters[start..<end])
        if run.count == 4, let year = Int(String(run)), (1900...2099).contains(year) { return (4, log2(200)) }
        var bits = log2(10.0)
        for index in 1..<run.count {
            bits += run[index] == run[index - 1] || follows(run[index - 1], run[index]) ? 1 : log2(10.0)
        }
        return (run.count, bits)
    }

    /// The alphabets a brute-force search over these characters must cover.
    private static func alphabetSize(of characters: [Character]) -> Int {
        var size = 0
        if characters.contains(where: { $0.isASCII && $0.isLowercase }) { size += 26 }
        if characters.contains(where: { $0.isASCII && $0.isUppercase }) { size += 26 }
        if characters.contains(where: { $0.isASCII && $0.isNumber }) { size += 10 }
        if characters.contains(where: { $0.isASCII && !$0.isLetter && !$0.isNumber }) { size += 33 }
        if characters.contains(where: { !$0.isASCII }) { size += 100 }
        return size
    }

    /// Letters (and digits or symbols standing in for letters, as in "p4ssw0rd") from `start` that read like a word:
    /// at least three, one in five or more a vowel. Priced as a Diceware word, or by rank when it is a common password, plus a bit for
    /// capitals and a bit for substitutions.
    private static func wordLikeRun(_ characters: [Character], from start: Int) -> (length: Int, bits: Double, common: Bool)? {
        var end = start
        var letters: [Character] = []
        var substituted = false
        var capitals = false
        while end < characters.count {
            let character = characters[end]
            if character.isLetter {
                letters.append(Character(character.lowercased()))
                capitals = capitals || character.isUppercase
            } else if let letter = leet[character], end > start, end + 1 < characters.count, characters[end + 1].isLetter {
                letters.append(letter)
                substituted = true
            } else {
                break
            }
            end += 1
        }
        guard letters.count >= 3 else { return nil }
        let vowels = letters.filter { "aeiouyàáâäãåèéêëìíîïòóôöõùúûüýÿæœø".contains($0) }.count
        guard Double(vowels) / Double(letters.count) >= 0.2 else { return nil }
        // "abcdef" and "qwerty" are runs, not words.
        let runSteps = (1..<letters.count).filter { follows(letters[$0 - 1], letters[$0]) }.count
        guard runSteps * 2 < letters.count - 1 else { return nil }
        // A Diceware word per nine letters (longer runs are words run together), or what the letters cost one by one
        // when that is less (short words).
        var bits = min(12.9 * Double((letters.count + 8) / 9), Double(letters.count) * log2(26))
        var common = false
        if let rank = commonRank[String(letters)] {
            bits = log2(Double(rank + 2))
            common = true
        }
        if capitals { bits += 1 }
        if substituted { bits += 1 }
        return (end - start, bits, common)
    }

    /// Guesses for a whole passphrase that is a common password, possibly with substitutions, capitals and a few
    /// digits or symbols at the end ("Password123!").
    private static func guessesAsCommon(_ characters: [Character]) -> Double? {
        var base = characters
        var suffix = 0.0
        while let last = base.last, !last.isLetter, base.count > 1 {
            suffix += last.isNumber ? log2(10) : log2(33)
            base.removeLast()
        }
        let plain = String(base.map { leet[$0] ?? Character($0.lowercased()) })
        if let rank = commonRank[plain] {
            return log2(Double(rank + 2)) + suffix + (base.contains(where: \.isUppercase) ? 1 : 0)
        }
        if let rank = commonRank[String(characters.map { Character($0.lowercased()) })] {
            return log2(Double(rank + 2))
        }
        return nil
    }

    /// The shortest unit the characters repeat, when they are that unit two or more times.
    private static func repeatedUnit(_ characters: [Character]) -> [Character]? {
        guard characters.count >= 4 else { return nil }
        for length in 1...(characters.count / 2) where characters.count % length == 0 {
            let unit = Array(characters[0..<length])
            if stride(from: length, to: characters.count, by: length).allSatisfy({ Array(characters[$0..<$0 + length]) == unit }) {
                return unit
            }
        }
        return nil
    }

    /// Whether `next` continues a run from `previous`: the next or previous letter or digit, or a keyboard neighbour.
    private static func follows(_ previous: Character, _ next: Character) -> Bool {
        let a = Character(previous.lowercased()), b = Character(next.lowercased())
        if let x = a.asciiValue, let y = b.asciiValue, (a.isLetter && b.isLetter) || (a.isNumber && b.isNumber) {
            if abs(Int(x) - Int(y)) == 1 { return true }
        }
        for row in keyboardRows {
            if let i = row.firstIndex(of: a), let j = row.firstIndex(of: b), abs(row.distance(from: i, to: j)) == 1 { return true }
        }
        return false
    }

    private static let keyboardRows = ["1234567890-=", "qwertyuiop[]", "asdfghjkl;'", "zxcvbnm,./", "qwertzuiop", "azertyuiop", "yxcvbnm"]

    private static let leet: [Character: Character] = [
        "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s", "!": "i",
    ]

    /// Passwords that top every published list of leaked passwords, most common first (rank = guesses needed).
    private static let commonRank: [String: Int] = {
        let list = """
            123456 password 123456789 12345678 12345 qwerty 1234567 111111 1234567890 123123 abc123 1234 password1 iloveyou \
            000000 qwerty123 dragon sunshine princess letmein 654321 monkey 27653 1qaz2wsx 123321 qwertyuiop superman \
            asdfghjkl 666666 121212 baseball football welcome shadow master michael jennifer jordan hunter trustno1 ranger \
            buster thomas robert soccer batman test pass killer hockey george charlie andrew michelle love jessica pepper \
            daniel access joshua maggie starwars silver william dallas yankees hello amanda orange biteme freedom computer \
            sexy thunder nicole ginger heather hammer summer corvette taylor fuckyou austin merlin matthew cheese secret \
            whatever passw0rd admin administrator login changeme default guest root zaq12wsx qazwsx asdfgh zxcvbnm \
            zxcvbn mustang access14 flower lovely cookie purple chocolate butterfly angel liverpool arsenal chelsea \
            passphrase mypassword password123 letmein1 welcome1 iloveyou1 football1 monkey1 abcdef abcd1234 aaaaaa \
            correcthorsebatterystaple coffer vault secret123 qwerty1 princess1 sunshine1 blink182 samsung apple google \
            facebook linkedin microsoft
            """
        var ranks: [String: Int] = [:]
        for (rank, word) in list.split(separator: " ").enumerated() where ranks[String(word)] == nil {
            ranks[String(word)] = rank
        }
        return ranks
    }()
}
