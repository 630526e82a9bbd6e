import CFFI
import CMissivePlugin
import MissiveCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The C value of one argument of an action, checked and converted from the caller's JSON value.
@_spi(Benchmarks)
public enum ActionValue: Sendable, Hashable {
    /// `int32_t`.
    case int32(Int32)
    /// `int64_t`.
    case int64(Int64)
    /// `double`.
    case double(Double)
    /// `bool`.
    case bool(Bool)
    /// `const char *`: NUL-terminated UTF-8 without a NUL inside.
    case string(ActionString)
}

extension ActionValue {
    /// Writes the C value into an argument slot of 8 bytes.
    @inline(__always)
    fileprivate func store(into slot: UnsafeMutableRawPointer) {
        switch self {
        case .int32(let value): slot.storeBytes(of: value, as: Int32.self)
        case .int64(let value): slot.storeBytes(of: value, as: Int64.self)
        case .double(let value): slot.storeBytes(of: value, as: Double.self)
        case .bool(let value): slot.storeBytes(of: value ? 1 : 0, as: UInt8.self)
        case .string(let text): slot.storeBytes(of: UnsafeRawPointer(text.pointer), as: UnsafeRawPointer.self)
        }
    }
}

/// A NUL-terminated copy of a string argument, in memory that stays put while a call uses it. Owned by this
/// object and freed with it.
@_spi(Benchmarks)
public final class ActionString: @unchecked Sendable, Hashable {
    /// The bytes, followed by a NUL.
    let pointer: UnsafeMutablePointer<CChar>
    /// The length in bytes, without the NUL.
    let count: Int

    /// A copy of `bytes`, which must hold no NUL.
    public init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        pointer = .allocate(capacity: count + 1)
        let target = UnsafeMutableRawBufferPointer(start: pointer, count: count)
        // Contiguous bytes (a String's UTF-8, an array) are copied at once rather than one by one.
        if bytes.withContiguousStorageIfAvailable({ target.copyMemory(from: UnsafeRawBufferPointer($0)) }) == nil {
            target.copyBytes(from: bytes)
        }
        pointer[count] = 0
    }

    deinit { pointer.deallocate() }

    /// The string's bytes, without the NUL.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: pointer, count: count) }

    public static func == (lhs: ActionString, rhs: ActionString) -> Bool { lhs.bytes.elementsEqual(rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes: bytes) }
}

/// A plugin's action function with its libffi call interface, prepared once and used for every call.
///
/// This is where Missive calls plugin functions whose signature it learns only at run time
/// (missive_plugin.h, "The actions extension"): `ffi_prep_cif` describes the parameters once, and each call
/// is one `ffi_call` with the arguments laid out in slots. The decode path keeps its typed function
/// pointers; actions are not on it.
///
/// The call interface and its type table are owned by this object. A prepared `ffi_cif` is only read by
/// `ffi_call`, so calls may run on any number of threads at once.
@_spi(Benchmarks)
public final class ActionFunction: @unchecked Sendable {
    /// The signature the function is called by.
    public let signature: ActionSignature
    /// The function's address: the plugin's, or the code of a counting closure in front of it.
    public let address: UnsafeRawPointer
    private let cif: UnsafeMutablePointer<ffi_cif>
    private let types: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    /// Keeps the closure an address belongs to, for a counting function.
    private let owner: AnyObject?
    /// What fills each parameter's slot, in order: worked out once, so that a call reads no signature.
    private let slots: [Slot]
    /// How many value parameters there are.
    private let valueCount: Int
    /// The function, as `ffi_call` takes it.
    private let entry: @convention(c) () -> Void

    /// What goes into one parameter's slot.
    private enum Slot: UInt8 {
        case message, sink, value
    }

    /// Why a call interface could not be prepared.
    package struct PreparationError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Prepares the call interface of the function at `address` for `signature`.
    package init(signature: ActionSignature, address: UnsafeRawPointer, owner: AnyObject? = nil) throws(PreparationError) {
        self.signature = signature
        self.address = address
        self.owner = owner
        slots = signature.parameters.map { $0.type == .message ? .message : $0.type == .sink ? .sink : .value }
        valueCount = signature.valueParameters.count
        entry = unsafeBitCast(address, to: (@convention(c) () -> Void).self)
        let count = signature.parameters.count
        types = .allocate(capacity: max(count, 1))
        for (index, parameter) in signature.parameters.enumerated() {
            types[index] = Self.ffiType(parameter.type)
        }
        cif = .allocate(capacity: 1)
        let status = ffi_prep_cif(cif, missive_ffi_default_abi(), UInt32(count), missive_ffi_type_sint32(), count == 0 ? nil : types)
        guard status == FFI_OK else {
            cif.deallocate()
            types.deallocate()
            throw PreparationError(description: "libffi could not prepare a call for \(signature) (ffi_prep_cif returned \(status.rawValue))")
        }
    }

    deinit {
        cif.deallocate()
        types.deallocate()
    }

    private static func ffiType(_ type: ActionSignature.ParameterType) -> UnsafeMutablePointer<ffi_type> {
        switch type {
        case .int32: missive_ffi_type_sint32()
        case .int64: missive_ffi_type_sint64()
        case .double: missive_ffi_type_double()
        // C's bool is one byte; libffi widens it in the register as the ABI requires.
        case .bool: missive_ffi_type_uint8()
        case .string, .message, .sink: missive_ffi_type_pointer()
        }
    }

    /// Calls the function through `ffi_call`: `message` for its message parameter, `values` for its value
    /// parameters in order (already checked against the signature), and `sink` (a `missive_sink *`) for its
    /// sink. Returns the status the function returned.
    public func call(message: OpaquePointer?, values: [ActionValue], sink: UnsafeRawPointer) -> Int32 {
        precondition(values.count == valueCount, "values checked against the signature")
        let count = slots.count
        // One 8-byte slot per parameter holds its C value (every parameter type fits one), and libffi gets a
        // pointer to each; both live on the stack for the call.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(count, 1)) { storage in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { pointers in
                slots.withUnsafeBufferPointer { slots in
                    values.withUnsafeBufferPointer { values in
                        var next = 0
                        for index in 0..<count {
                            let slot = UnsafeMutableRawPointer(storage.baseAddress! + index)
                            switch slots[index] {
                            case .message: slot.storeBytes(of: UnsafeRawPointer(message), as: UnsafeRawPointer?.self)
                            case .sink: slot.storeBytes(of: sink, as: UnsafeRawPointer.self)
                            case .value:
                                values[next].store(into: slot)
                                next += 1
                            }
                            pointers[index] = slot
                        }
                        // A return value narrower than a register is written as a whole ffi_arg. The values
                        // (and so their strings) stay alive until the call has returned.
                        var result: ffi_arg = 0
                        ffi_call(cif, entry, &result, pointers.baseAddress)
                        return Int32(truncatingIfNeeded: result)
                    }
                }
            }
        }
    }

    /// The same function behind a libffi closure that counts its calls before it forwards each one, so that a
    /// check can prove a plugin was never called (`actions.refusals`).
    package func counting() throws(PreparationError) -> (function: ActionFunction, counter: ActionCallCounter) {
        let counter = ActionCallCounter(target: self)
        var code: UnsafeMutableRawPointer?
        guard let closure = ffi_closure_alloc(MemoryLayout<ffi_closure>.size, &code)?.assumingMemoryBound(to: ffi_closure.self), let code else {
            throw PreparationError(description: "libffi could not allocate a closure")
        }
        counter.closure = closure
        let status = ffi_prep_closure_loc(closure, cif, forwardCall, Unmanaged.passUnretained(counter).toOpaque(), code)
        guard status == FFI_OK else { throw PreparationError(description: "libffi could not prepare a closure (status \(status.rawValue))") }
        return (try ActionFunction(signature: signature, address: UnsafeRawPointer(code), owner: counter), counter)
    }

    /// Forwards a call made through a counting closure to the real function.
    fileprivate func forward(result: UnsafeMutableRawPointer?, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        ffi_call(cif, entry, result, arguments)
    }
}

/// How many times a counting closure (``ActionFunction/counting()``) was called. Owns the closure, which the
/// counting function keeps alive.
package final class ActionCallCounter: Sendable {
    private let target: ActionFunction
    private let count = Atomic<Int>(0)
    /// The libffi closure; written once before it can be called, freed with this object.
    nonisolated(unsafe) fileprivate var closure: UnsafeMutablePointer<ffi_closure>?

    fileprivate init(target: ActionFunction) { self.target = target }

    deinit { if let closure { ffi_closure_free(closure) } }

    /// The calls so far.
    package var calls: Int { count.load(ordering: .relaxed) }

    fileprivate func called(result: UnsafeMutableRawPointer?, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        count.add(1, ordering: .relaxed)
        target.forward(result: result, arguments: arguments)
    }
}

/// The C function behind every counting closure: `userData` is its ``ActionCallCounter``.
private func forwardCall(
    _ cif: UnsafeMutablePointer<ffi_cif>?, _ result: UnsafeMutableRawPointer?, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ userData: UnsafeMutableRawPointer?
) {
    guard let userData else { return }
    Unmanaged<ActionCallCounter>.fromOpaque(userData).takeUnretainedValue().called(result: result, arguments: arguments)
}
