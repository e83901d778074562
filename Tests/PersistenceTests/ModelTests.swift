import Testing
@testable import Persistence
