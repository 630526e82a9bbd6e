/// The sanitizer this process was built with, if any, found at run time by its runtime's entry symbol.
///
/// A sanitizer changes what a plugin host can promise: its allocator replaces `malloc` (so glibc's heap
/// counters stand still), its shadow memory reserves terabytes of address space (so a limit on the address
/// space breaks it), and its own handler turns a fatal signal into an exit with its exit code (66 for
/// ThreadSanitizer and 1 for AddressSanitizer, by default) after its report. See docs/SANITIZERS.md.
package enum Sanitizer: String, Sendable, CaseIterable {
    case address = "AddressSanitizer"
    case thread = "ThreadSanitizer"

    /// The runtime's entry, which the executable defines and exports when it was linked with the sanitizer.
    var entrySymbol: String {
        switch self {
        case .address: "__asan_init"
        case .thread: "__tsan_init"
        }
    }

    /// The sanitizer of this process, or `nil` for none.
    package static let current: Sanitizer? = allCases.first { DynamicLibrary.processDefines($0.entrySymbol) }
}
