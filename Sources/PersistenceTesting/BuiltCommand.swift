import Foundation
import Synchronization

/// An executable of this package as the build left it, run as a user would from the
/// package folder: for tests of commands such as `persistence` and `bookstore`.
///
/// ```swift
/// let output = try await BuiltCommand("persistence").run(["validate", "--models", path])
/// #expect(output.status == 0, "\(output.stderr)")
/// ```
public struct BuiltCommand: Sendable {
    /// What a finished run printed and how it ended.
    public struct Output: Sendable {
        /// How it ended, as a shell reports it: the exit status, or 128 + the signal that ended it.
        public var status: Int32
        /// Everything it wrote to standard output.
        public var stdout: String
        /// Everything it wrote to standard error.
        public var stderr: String
    }

    /// The package root: Sources/PersistenceTesting/BuiltCommand.swift → three levels up.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The executable's name, as the package's products (or, for a system tool, the `PATH`) name it.
    public let name: String
    /// Environment variables the run does without (settings of the test's own shell).
    public var unsetEnvironment: [String]
    /// Environment variables the run gets besides (or in place of) the test's own.
    public var environment: [String: String] = [:]
    /// Where it runs: the package folder unless told otherwise.
    public var workingDirectory: URL = packageRoot

    /// A program of the system rather than of this package, found on the `PATH`.
    private var isSystemTool = false
    /// The small file system whose namespace the run enters (see ``SmallFileSystem/launching(_:_:in:)``).
    private var fileSystem: SmallFileSystem?

    /// The executable `name` of this package, run with the test's environment less `unsetEnvironment`.
    public init(_ name: String, unsetEnvironment: [String] = []) {
        self.name = name
        self.unsetEnvironment = unsetEnvironment
    }

    /// A program of the system, found on the `PATH` and run the same way: another client of
    /// a store (`sqlite3`, `psql`) for tests of what other processes see.
    ///
    /// ```swift
    /// let update = try await BuiltCommand(systemTool: "sqlite3").run([path, "UPDATE ZBOOK SET ZPRICE = 1"])
    /// ```
    public init(systemTool name: String) {
        self.name = name
        self.unsetEnvironment = []
        self.isSystemTool = true
    }

    /// The same command, run where `small` is mounted, so that it opens SQLite stores on it.
    ///
    /// ```swift
    /// let migrate = try await BuiltCommand("bookstore").runningOn(small).run(["migrate", "--store", url.description])
    /// ```
    public func runningOn(_ small: SmallFileSystem) -> BuiltCommand {
        var command = self
        command.fileSystem = small
        return command
    }

    /// The executable beside the test bundle in the build products folder, or in `.build/debug`
    /// (a system tool: the first on the `PATH`).
    ///
    /// - Throws: ``Missing`` when it has not been built (or is not installed).
    public func executable() throws -> URL {
        if isSystemTool {
            let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            let candidates = folders.map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw Missing(name: name, looked: candidates.map(\.path), isSystemTool: true)
            }
            return found
        }
        var candidates: [URL] = []
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name))
        candidates.append(Self.packageRoot.appendingPathComponent(".build/debug/\(name)"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Missing(name: name, looked: candidates.map(\.path))
        }
        return found
    }

    /// Runs it to the end on a thread of its own: waiting for a process blocks, and a
    /// blocked thread of the cooperative pool (two on a two-core machine) stalls other tests.
    public func run(_ arguments: [String]) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try runBlocking(arguments) }) }
        }
    }

    /// Runs it to the end on the calling thread.
    public func runBlocking(_ arguments: [String]) throws -> Output {
        let launched =
            try fileSystem?.launching(try executable(), arguments, in: Self.packageRoot) ?? (executable: try executable(), arguments: arguments)
        var environment = ProcessInfo.processInfo.environment
        for variable in unsetEnvironment { environment[variable] = nil }
        environment.merge(self.environment) { $1 }
        let (out, err) = (ChildProcess.Pipe(), ChildProcess.Pipe())
        let child = try ChildProcess(
            executable: launched.executable,
            arguments: launched.arguments,
            environment: environment,
            workingDirectory: workingDirectory,
            output: out.writing,
            error: err.writing
        )
        // The child holds the writing ends now; reading sees the end when it (and any child
        // of its own that kept them) ends.
        try? out.writing.close()
        try? err.writing.close()
        // Standard error is read on another thread so that neither pipe fills while the
        // other is read.
        let stderr = Mutex(Data())
        let readErrors = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = err.reading.readDataToEndOfFile()
            stderr.withLock { $0 = data }
            readErrors.signal()
        }
        let stdout = out.reading.readDataToEndOfFile()
        readErrors.wait()
        let termination = child.waitUntilExit()
        return Output(
            status: termination.shellStatus,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr.withLock { $0 }, as: UTF8.self)
        )
    }

    /// The executable was not found where a build puts it.
    public struct Missing: Error, CustomStringConvertible {
        /// The executable that was looked for.
        public var name: String
        /// The paths it was looked for at, in order.
        public var looked: [String]
        var isSystemTool = false
        /// What to do (build it, or install it) and where it was looked for.
        public var description: String {
            let what = isSystemTool ? "install \(name) (scripts/setup.sh does)" : "build the \(name) executable first (swift build)"
            return "\(what); looked at \(looked.joined(separator: ", "))"
        }
    }
}
