import Foundation
import MissiveCore

// The built-in types' JSON coding over MissiveJSONReader and MissiveJSONWriter, written by hand as
// `@MissiveMessage` would generate it (this target does not build the macros, to spare hosts swift-syntax).
// GeneratedCodingTests checks that each agrees with the type's Codable coding, on valid and invalid content.
// Keep the properties here in step with the types' declarations: a property missing here fails those tests.

extension TextMessage: MissiveJSONValue, MissiveDecodesInPlace {
    /// Reads the content with the generated coding.
    public init(missiveJSON reader: inout MissiveJSONReader) throws {
        var _content: (String)? = nil
        var _extra: (String?)? = nil
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            if key.matches("content") {
                guard _content == nil else { throw reader.duplicate(key) }
                _content = try reader.decode((String).self)
            } else if key.matches("extra") {
                guard _extra == nil else { throw reader.duplicate(key) }
                _extra = try reader.decode((String?).self)
            } else {
                try reader.skipValue()
            }
        }
        if let value = _content { content = value } else { content = try MissiveJSONReader.absent((String).self, key: "content") }
        if let value = _extra { extra = value } else { extra = try MissiveJSONReader.absent((String?).self, key: "extra") }
    }

    /// Writes the content as `MissiveJSON.encoder` would: members sorted by name, `nil` ones left out.
    public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        try writer.member("content", content)
        try writer.member("extra", extra)
        writer.endObject()
    }
}

extension ImageMessage: MissiveJSONValue, MissiveDecodesInPlace {
    /// Reads the content with the generated coding.
    public init(missiveJSON reader: inout MissiveJSONReader) throws {
        var _remoteURL: (String?)? = nil
        var _localPath: (String?)? = nil
        var _mimeType: (String)? = nil
        var _sizeBytes: (Int64?)? = nil
        var _width: (Int?)? = nil
        var _height: (Int?)? = nil
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            if key.matches("remoteURL") {
                guard _remoteURL == nil else { throw reader.duplicate(key) }
                _remoteURL = try reader.decode((String?).self)
            } else if key.matches("localPath") {
                guard _localPath == nil else { throw reader.duplicate(key) }
                _localPath = try reader.decode((String?).self)
            } else if key.matches("mimeType") {
                guard _mimeType == nil else { throw reader.duplicate(key) }
                _mimeType = try reader.decode((String).self)
            } else if key.matches("sizeBytes") {
                guard _sizeBytes == nil else { throw reader.duplicate(key) }
                _sizeBytes = try reader.decode((Int64?).self)
            } else if key.matches("width") {
                guard _width == nil else { throw reader.duplicate(key) }
                _width = try reader.decode((Int?).self)
            } else if key.matches("height") {
                guard _height == nil else { throw reader.duplicate(key) }
                _height = try reader.decode((Int?).self)
            } else {
                try reader.skipValue()
            }
        }
        if let value = _remoteURL { remoteURL = value } else { remoteURL = try MissiveJSONReader.absent((String?).self, key: "remoteURL") }
        if let value = _localPath { localPath = value } else { localPath = try MissiveJSONReader.absent((String?).self, key: "localPath") }
        if let value = _mimeType { mimeType = value } else { mimeType = try MissiveJSONReader.absent((String).self, key: "mimeType") }
        if let value = _sizeBytes { sizeBytes = value } else { sizeBytes = try MissiveJSONReader.absent((Int64?).self, key: "sizeBytes") }
        if let value = _width { width = value } else { width = try MissiveJSONReader.absent((Int?).self, key: "width") }
        if let value = _height { height = value } else { height = try MissiveJSONReader.absent((Int?).self, key: "height") }
    }

    /// Writes the content as `MissiveJSON.encoder` would: members sorted by name, `nil` ones left out.
    public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        try writer.member("height", height)
        try writer.member("localPath", localPath)
        try writer.member("mimeType", mimeType)
        try writer.member("remoteURL", remoteURL)
        try writer.member("sizeBytes", sizeBytes)
        try writer.member("width", width)
        writer.endObject()
    }
}

extension VoiceMessage: MissiveJSONValue, MissiveDecodesInPlace {
    /// Reads the content with the generated coding.
    public init(missiveJSON reader: inout MissiveJSONReader) throws {
        var _remoteURL: (String?)? = nil
        var _localPath: (String?)? = nil
        var _mimeType: (String)? = nil
        var _sizeBytes: (Int64?)? = nil
        var _durationSeconds: (Int)? = nil
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            if key.matches("remoteURL") {
                guard _remoteURL == nil else { throw reader.duplicate(key) }
                _remoteURL = try reader.decode((String?).self)
            } else if key.matches("localPath") {
                guard _localPath == nil else { throw reader.duplicate(key) }
                _localPath = try reader.decode((String?).self)
            } else if key.matches("mimeType") {
                guard _mimeType == nil else { throw reader.duplicate(key) }
                _mimeType = try reader.decode((String).self)
            } else if key.matches("sizeBytes") {
                guard _sizeBytes == nil else { throw reader.duplicate(key) }
                _sizeBytes = try reader.decode((Int64?).self)
            } else if key.matches("durationSeconds") {
                guard _durationSeconds == nil else { throw reader.duplicate(key) }
                _durationSeconds = try reader.decode((Int).self)
            } else {
                try reader.skipValue()
            }
        }
        if let value = _remoteURL { remoteURL = value } else { remoteURL = try MissiveJSONReader.absent((String?).self, key: "remoteURL") }
        if let value = _localPath { localPath = value } else { localPath = try MissiveJSONReader.absent((String?).self, key: "localPath") }
        if let value = _mimeType { mimeType = value } else { mimeType = try MissiveJSONReader.absent((String).self, key: "mimeType") }
        if let value = _sizeBytes { sizeBytes = value } else { sizeBytes = try MissiveJSONReader.absent((Int64?).self, key: "sizeBytes") }
        if let value = _durationSeconds { durationSeconds = value } else { durationSeconds = try MissiveJSONReader.absent((Int).self, key: "durationSeconds") }
    }

    /// Writes the content as `MissiveJSON.encoder` would: members sorted by name, `nil` ones left out.
    public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        try writer.member("durationSeconds", durationSeconds)
        try writer.member("localPath", localPath)
        try writer.member("mimeType", mimeType)
        try writer.member("remoteURL", remoteURL)
        try writer.member("sizeBytes", sizeBytes)
        writer.endObject()
    }
}

extension VideoMessage: MissiveJSONValue, MissiveDecodesInPlace {
    /// Reads the content with the generated coding.
    public init(missiveJSON reader: inout MissiveJSONReader) throws {
        var _remoteURL: (String?)? = nil
        var _localPath: (String?)? = nil
        var _mimeType: (String)? = nil
        var _sizeBytes: (Int64?)? = nil
        var _durationSeconds: (Int)? = nil
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            if key.matches("remoteURL") {
                guard _remoteURL == nil else { throw reader.duplicate(key) }
                _remoteURL = try reader.decode((String?).self)
            } else if key.matches("localPath") {
                guard _localPath == nil else { throw reader.duplicate(key) }
                _localPath = try reader.decode((String?).self)
            } else if key.matches("mimeType") {
                guard _mimeType == nil else { throw reader.duplicate(key) }
                _mimeType = try reader.decode((String).self)
            } else if key.matches("sizeBytes") {
                guard _sizeBytes == nil else { throw reader.duplicate(key) }
                _sizeBytes = try reader.decode((Int64?).self)
            } else if key.matches("durationSeconds") {
                guard _durationSeconds == nil else { throw reader.duplicate(key) }
                _durationSeconds = try reader.decode((Int).self)
            } else {
                try reader.skipValue()
            }
        }
        if let value = _remoteURL { remoteURL = value } else { remoteURL = try MissiveJSONReader.absent((String?).self, key: "remoteURL") }
        if let value = _localPath { localPath = value } else { localPath = try MissiveJSONReader.absent((String?).self, key: "localPath") }
        if let value = _mimeType { mimeType = value } else { mimeType = try MissiveJSONReader.absent((String).self, key: "mimeType") }
        if let value = _sizeBytes { sizeBytes = value } else { sizeBytes = try MissiveJSONReader.absent((Int64?).self, key: "sizeBytes") }
        if let value = _durationSeconds { durationSeconds = value } else { durationSeconds = try MissiveJSONReader.absent((Int).self, key: "durationSeconds") }
    }

    /// Writes the content as `MissiveJSON.encoder` would: members sorted by name, `nil` ones left out.
    public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        try writer.member("durationSeconds", durationSeconds)
        try writer.member("localPath", localPath)
        try writer.member("mimeType", mimeType)
        try writer.member("remoteURL", remoteURL)
        try writer.member("sizeBytes", sizeBytes)
        writer.endObject()
    }
}

extension FileMessage: MissiveJSONValue, MissiveDecodesInPlace {
    /// Reads the content with the generated coding.
    public init(missiveJSON reader: inout MissiveJSONReader) throws {
        var _name: (String)? = nil
        var _remoteURL: (String?)? = nil
        var _localPath: (String?)? = nil
        var _mimeType: (String)? = nil
        var _sizeBytes: (Int64?)? = nil
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            if key.matches("name") {
                guard _name == nil else { throw reader.duplicate(key) }
                _name = try reader.decode((String).self)
            } else if key.matches("remoteURL") {
                guard _remoteURL == nil else { throw reader.duplicate(key) }
                _remoteURL = try reader.decode((String?).self)
            } else if key.matches("localPath") {
                guard _localPath == nil else { throw reader.duplicate(key) }
                _localPath = try reader.decode((String?).self)
            } else if key.matches("mimeType") {
                guard _mimeType == nil else { throw reader.duplicate(key) }
                _mimeType = try reader.decode((String).self)
            } else if key.matches("sizeBytes") {
                guard _sizeBytes == nil else { throw reader.duplicate(key) }
                _sizeBytes = try reader.decode((Int64?).self)
            } else {
                try reader.skipValue()
            }
        }
        if let value = _name { name = value } else { name = try MissiveJSONReader.absent((String).self, key: "name") }
        if let value = _remoteURL { remoteURL = value } else { remoteURL = try MissiveJSONReader.absent((String?).self, key: "remoteURL") }
        if let value = _localPath { localPath = value } else { localPath = try MissiveJSONReader.absent((String?).self, key: "localPath") }
        if let value = _mimeType { mimeType = value } else { mimeType = try MissiveJSONReader.absent((String).self, key: "mimeType") }
        if let value = _sizeBytes { sizeBytes = value } else { sizeBytes = try MissiveJSONReader.absent((Int64?).self, key: "sizeBytes") }
    }

    /// Writes the content as `MissiveJSON.encoder` would: members sorted by name, `nil` ones left out.
    public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        try writer.member("localPath", localPath)
        try writer.member("mimeType", mimeType)
        try writer.member("name", name)
        try writer.member("remoteURL", remoteURL)
        try writer.member("sizeBytes", sizeBytes)
        writer.endObject()
    }
}

extension LocationMessage: MissiveJSONValue {
    /// Reads the content with the generated coding.
    public init(missiveJSON reader: inout MissiveJSONReader) throws {
        var _latitude: (Double)? = nil
        var _longitude: (Double)? = nil
        var _poi: (String?)? = nil
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor) {
            if key.matches("latitude") {
                guard _latitude == nil else { throw reader.duplicate(key) }
                _latitude = try reader.decode((Double).self)
            } else if key.matches("longitude") {
                guard _longitude == nil else { throw reader.duplicate(key) }
                _longitude = try reader.decode((Double).self)
            } else if key.matches("poi") {
                guard _poi == nil else { throw reader.duplicate(key) }
                _poi = try reader.decode((String?).self)
            } else {
                try reader.skipValue()
            }
        }
        if let value = _latitude { latitude = value } else { latitude = try MissiveJSONReader.absent((Double).self, key: "latitude") }
        if let value = _longitude { longitude = value } else { longitude = try MissiveJSONReader.absent((Double).self, key: "longitude") }
        if let value = _poi { poi = value } else { poi = try MissiveJSONReader.absent((String?).self, key: "poi") }
    }

    /// Writes the content as `MissiveJSON.encoder` would: members sorted by name, `nil` ones left out.
    public func writeMissiveJSON(to writer: inout MissiveJSONWriter) throws {
        writer.beginObject()
        try writer.member("latitude", latitude)
        try writer.member("longitude", longitude)
        try writer.member("poi", poi)
        writer.endObject()
    }
}
