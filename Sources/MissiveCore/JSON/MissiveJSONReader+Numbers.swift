import Foundation

extension MissiveJSONReader {
    /// A number as the scanner found it: its bytes, and its digits as an integer when they fit.
    @usableFromInline struct ScannedNumber {
        @usableFromInline var range: Range<Int>
        @usableFromInline var negative = false
        /// Whether the number has a fraction or an exponent.
        @usableFromInline var isInteger = true
        /// The integer part's value, when it fits in 64 bits.
        @usableFromInline var magnitude: UInt64 = 0
        @usableFromInline var overflow = false
        @usableFromInline init(range: Range<Int>) { self.range = range }
    }

    /// Scans a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    @usableFromInline mutating func scanNumber() throws(MissiveJSONError) -> ScannedNumber {
        skipWhitespace()
        var number = ScannedNumber(range: index..<index)
        if peek() == UInt8(ascii: "-") {
            number.negative = true
            index += 1
        }
        guard let first = peek(), isDigit(first) else { throw fail("invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) { throw fail("invalid number") }
        } else {
            while let byte = peek(), isDigit(byte) {
                let (times10, overflow1) = number.magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if overflow1 || overflow2 { number.overflow = true }
                number.magnitude = sum
                index += 1
            }
        }
        if peek() == UInt8(ascii: ".") {
            number.isInteger = false
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw fail("invalid number") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            number.isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw fail("invalid number") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        number.range = number.range.lowerBound..<index
        return number
    }

    /// Skips a number with the grammar ``scanNumber()`` checks, without computing its value: what skipping a
    /// value needs, and the envelope's scan of every member's value.
    @usableFromInline mutating func skipNumber() throws(MissiveJSONError) {
        if index < count, byte(at: index) == UInt8(ascii: "-") { index += 1 }
        guard index < count, isDigit(byte(at: index)) else { throw fail("invalid number") }
        if byte(at: index) == UInt8(ascii: "0") {
            index += 1
            if index < count, isDigit(byte(at: index)) { throw fail("invalid number") }
        } else {
            while index < count, isDigit(byte(at: index)) { index += 1 }
        }
        if index < count, byte(at: index) == UInt8(ascii: ".") {
            index += 1
            guard index < count, isDigit(byte(at: index)) else { throw fail("invalid number") }
            while index < count, isDigit(byte(at: index)) { index += 1 }
        }
        if index < count, byte(at: index) | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, byte(at: index) == UInt8(ascii: "+") || byte(at: index) == UInt8(ascii: "-") { index += 1 }
            guard index < count, isDigit(byte(at: index)) else { throw fail("invalid number") }
            while index < count, isDigit(byte(at: index)) { index += 1 }
        }
    }

    @inlinable func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Reads an integer that fits in `T`. A number written with a fraction or an exponent is refused,
    /// even when its value is whole.
    @inlinable public mutating func readInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(MissiveJSONError) -> T {
        guard T.bitWidth <= 64 else { throw fail("integers wider than 64 bits are not read") }
        let kind = try peekKind()
        guard kind == .number else { throw fail("expected an integer") }
        let number = try scanNumber()
        guard number.isInteger, !number.overflow else { throw fail("number does not fit in \(T.self)") }
        if number.negative {
            guard T.isSigned, number.magnitude <= UInt64(T.max) + 1 else { throw fail("number does not fit in \(T.self)") }
            return T(truncatingIfNeeded: 0 &- number.magnitude)
        }
        guard number.magnitude <= UInt64(T.max) else { throw fail("number does not fit in \(T.self)") }
        return T(truncatingIfNeeded: number.magnitude)
    }

    /// Reads a finite number as a `Double`, correctly rounded. A number too large for a `Double`, or not zero
    /// but so small that it rounds to zero, is refused, as `JSONDecoder` refuses them.
    public mutating func readDouble() throws(MissiveJSONError) -> Double {
        guard try peekKind() == .number else { throw fail("expected a number") }
        let number = try scanNumber()
        if number.isInteger, !number.overflow, number.magnitude <= 1 << 53 {
            let value = Double(number.magnitude)
            return number.negative ? -value : value
        }
        if let value = Self.simpleDecimal(bytes(number.range)) { return value }
        let text = String(decoding: bytes(number.range), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw MissiveJSONError(offset: number.range.lowerBound, message: "number does not fit in Double")
        }
        if value == 0, bytes(number.range).contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
            // Anything but zero that rounds to zero: too small for a Double.
            let mantissa = text.prefix { $0 != "e" && $0 != "E" }
            if mantissa.contains(where: { $0 >= "1" && $0 <= "9" }) {
                throw MissiveJSONError(offset: number.range.lowerBound, message: "number does not fit in Double")
            }
        }
        return value
    }

    /// Reads a finite number as a `Float`: the `Double` it reads as, when that `Float` holds it exactly or it is
    /// not near a halfway point between two `Float`s; otherwise the number is refused rather than risk rounding
    /// twice.
    public mutating func readFloat() throws(MissiveJSONError) -> Float {
        let from = index
        let double = try readDouble()
        let float = Float(double)
        guard float.isNormal || (float == 0 && double == 0) else { throw MissiveJSONError(offset: from, message: "number does not fit in Float") }
        if Double(float) != double {
            let text = String(decoding: bytes(from..<index), as: UTF8.self).trimmingCharacters(in: .whitespaces)
            guard Float(text) == float else { throw MissiveJSONError(offset: from, message: "number does not round to one Float") }
        }
        return float
    }

    /// The value of a number with at most 15 significant digits and a small decimal exponent, which one
    /// exact multiplication or division by a power of ten gives correctly rounded; `nil` for any other.
    @usableFromInline static func simpleDecimal(_ text: UnsafeRawBufferPointer) -> Double? {
        var digits: UInt64 = 0
        var significant = 0
        var scale = 0
        var exponent = 0
        var negative = false
        var i = 0
        if text.first == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        var inFraction = false
        while i < text.count {
            let byte = text[i]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                var sign = 1
                i += 1
                if text[i] == UInt8(ascii: "-") { sign = -1; i += 1 } else if text[i] == UInt8(ascii: "+") { i += 1 }
                var value = 0
                while i < text.count {
                    value = value * 10 + Int(text[i] - UInt8(ascii: "0"))
                    if value > 400 { return nil }
                    i += 1
                }
                exponent = sign * value
                break
            } else {
                if digits != 0 || byte != UInt8(ascii: "0") { significant += 1 }
                if significant > 15 { return nil }
                digits = digits * 10 + UInt64(byte - UInt8(ascii: "0"))
                if inFraction { scale += 1 }
            }
            i += 1
        }
        let power = exponent - scale
        guard (-22...22).contains(power) else { return nil }
        if digits == 0 { return negative ? -0.0 : 0 }
        var value = Double(digits)
        value = power >= 0 ? value * powersOfTen[power] : value / powersOfTen[-power]
        return negative ? -value : value
    }

    @usableFromInline static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }
}
