import FuzzSupport

// libFuzzer target: the input is one envelope line. See EnvelopeChecks for what it checks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    EnvelopeChecks.check(UnsafeBufferPointer(start: data, count: size))
    return 0
}
