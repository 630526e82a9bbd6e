// Hosts get the message protocols (MessageType, Persistence, MediaReference, ...) with `import Missive`.
@_exported import MissiveCore
