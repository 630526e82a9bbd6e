import FuzzSupport

// libFuzzer target: the input is an objectName, a newline and the content. See DecoderChecks for what it
// checks. Loading the plugins before the first input keeps their coverage counters in view from the start.
@_cdecl("LLVMFuzzerInitialize")
public func initializeDecoders(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    _ = DecoderChecks.registry
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    DecoderChecks.check(UnsafeBufferPointer(start: data, count: size))
    return 0
}
