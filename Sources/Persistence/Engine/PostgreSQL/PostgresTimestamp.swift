import Foundation

/// PostgreSQL's `timestamp with time zone` and Core Data's seconds since 2001-01-01.
///
/// The server keeps microseconds since 2000-01-01 UTC, so a date with at most microsecond
/// precision (every date parsed from text, most dates from clocks) comes back exactly;
/// finer fractions are rounded to the nearest microsecond.
///
/// ```swift
/// PostgresTimestamp.text(secondsSinceReferenceDate: 0.5)   // "2001-01-01 00:00:00.500000+00"
/// PostgresTimestamp.secondsSinceReferenceDate(text: "2001-01-01 00:00:01+00") // 1.0
/// ```
enum PostgresTimestamp {
    /// 2000-01-01 (PostgreSQL's epoch) to 2001-01-01 (Core Data's): 366 days.
    static let epochOffsetMicroseconds: Int64 = 366 * 86_400 * 1_000_000

    /// The binary wire value: microseconds since 2000-01-01 UTC.
    static func secondsSinceReferenceDate(microsecondsSince2000 micros: Int64) -> Double {
        if micros == Int64.max { return .infinity }
        if micros == Int64.min { return -.infinity }
        // Both steps are exact or correctly rounded, so a microsecond date comes back as the
        // same Double it was written from.
        return Double(micros - epochOffsetMicroseconds) / 1_000_000
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, which the server reads whatever its DateStyle.
    static func text(secondsSinceReferenceDate seconds: Double) -> String {
        if seconds == .infinity { return "infinity" }
        if seconds == -.infinity { return "-infinity" }
        let micros = Int64((seconds * 1_000_000).rounded())
        var days = micros.floorDivided(by: 86_400_000_000)
        let timeOfDay = micros - days * 86_400_000_000
        days += 11_323  // 1970-01-01 → 2001-01-01
        let (year, month, day) = civil(fromDaysSince1970: days)
        let hour = timeOfDay / 3_600_000_000
        let minute = timeOfDay / 60_000_000 % 60
        let second = timeOfDay / 1_000_000 % 60
        let fraction = timeOfDay % 1_000_000
        // Year 0 is 1 BC; PostgreSQL has no year 0 and writes the era instead of a sign.
        let era = year <= 0 ? " BC" : ""
        let shownYear = year <= 0 ? 1 - year : year
        return "\(pad(shownYear, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(fraction, 6))+00\(era)"
    }

    /// Reads the server's text form with `DateStyle=ISO` (the connection sets it):
    /// `2001-01-01 00:00:00.5+00`, a zone such as `+05:30`, ` BC`, `infinity`.
    static func secondsSinceReferenceDate(text: String) -> Double? {
        if text == "infinity" { return .infinity }
        if text == "-infinity" { return -.infinity }
        var rest = Substring(text)
        var bc = false
        if rest.hasSuffix(" BC") {
            bc = true
            rest = rest.dropLast(3)
        }
        let utf8 = Array(rest.utf8)
        var index = 0
        func number(maxDigits: Int = .max) -> Int64? {
            var value: Int64 = 0
            var digits = 0
            while index < utf8.count, digits < maxDigits, (48...57).contains(utf8[index]) {
                value = value * 10 + Int64(utf8[index] - 48)
                index += 1
                digits += 1
            }
            return digits == 0 ? nil : value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < utf8.count, utf8[index] == character else { return false }
            index += 1
            return true
        }
        guard var year = number(), expect(UInt8(ascii: "-")), let month = number(), expect(UInt8(ascii: "-")), let day = number() else { return nil }
        if bc { year = 1 - year }
        var micros: Int64 = 0
        if expect(UInt8(ascii: " ")) || expect(UInt8(ascii: "T")) {
            guard let hour = number(), expect(UInt8(ascii: ":")), let minute = number(), expect(UInt8(ascii: ":")), let second = number() else {
                return nil
            }
            micros = ((hour * 60 + minute) * 60 + second) * 1_000_000
            if expect(UInt8(ascii: ".")) {
                let start = index
                guard var fraction = number(maxDigits: 6) else { return nil }
                for _ in (index - start)..<6 { fraction *= 10 }
                micros += fraction
                _ = number()  // digits past microseconds, which the server never writes
            }
        }
        if index < utf8.count {
            let sign: Int64
            if expect(UInt8(ascii: "+")) { sign = 1 } else if expect(UInt8(ascii: "-")) { sign = -1 } else { return nil }
            guard let hours = number(maxDigits: 2) else { return nil }
            var offset = hours * 3600
            if expect(UInt8(ascii: ":")), let minutes = number(maxDigits: 2) { offset += minutes * 60 }
            if expect(UInt8(ascii: ":")), let seconds = number(maxDigits: 2) { offset += seconds }
            micros -= sign * offset * 1_000_000
        }
        guard index == utf8.count else { return nil }
        let days = daysSince1970(year: year, month: month, day: day) - 11_323
        return secondsSinceReferenceDate(microsecondsSince2000: days * 86_400_000_000 + micros + epochOffsetMicroseconds)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// The proleptic Gregorian date of a day number (days since 1970-01-01).
    static func civil(fromDaysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        // Howard Hinnant's days-to-civil algorithm, on eras of 400 years.
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The day number (days since 1970-01-01) of a proleptic Gregorian date.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int64 {
    /// Division rounding towards negative infinity, for dates before the epoch.
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
