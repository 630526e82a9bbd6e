import FuzzSupport

// libFuzzer target: the first byte chooses whether the rest is a metadata section (even) or a whole plugin
// file (odd). See MetadataChecks for what it checks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadata(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    MetadataChecks.check(UnsafeBufferPointer(start: data, count: size))
    return 0
}
