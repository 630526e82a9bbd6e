import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs work on a thread with a small stack, as hosts decode: Swift concurrency's threads have 512 KiB of
/// stack, and many thread pools give 256 KiB. A check run on the process's main thread has 8 MiB, where a
/// recursive parser without a depth limit survives input that overflows it in a host.
enum SmallStack {
    /// The stack size of the thread the input checks run on.
    static let size = 256 << 10

    /// Runs `body` on a new thread whose stack is ``size`` bytes (`pthread_attr_setstacksize`), waits for
    /// it, and returns what it returned. Runs it on the current thread when no such thread can be made.
    static func run<Value>(_ body: () -> Value) -> Value {
        var result: Value?
        withoutActuallyEscaping({ result = body() }) { work in
            let job = Job(work)
            let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
            pthread_attr_init(attributes)
            defer {
                pthread_attr_destroy(attributes)
                attributes.deallocate()
            }
            var thread: pthread_t = 0
            guard pthread_attr_setstacksize(attributes, size) == 0,
                  pthread_create(&thread, attributes, { Unmanaged<Job>.fromOpaque($0!).takeUnretainedValue().work(); return nil },
                                 Unmanaged.passUnretained(job).toOpaque()) == 0
            else {
                work()
                return
            }
            pthread_join(thread, nil)
        }
        return result!
    }

    /// The work handed to the thread; only one thread touches it at a time (the creator waits in
    /// `pthread_join`).
    private final class Job: @unchecked Sendable {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }
}
