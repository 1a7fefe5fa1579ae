/**
 * GraphQL schema of `/api/v3/graphql` (spec §2, §4.3; platform-reference §2): list queries
 * wrapped as `{ data }`, `tags` and `webhooks` bare; no pagination. Printable with
 * `occusim schema --graphql`.
 */
import { webhookTypeDefs } from './webhook-schema.js';

export const typeDefs = /* GraphQL */ `
  type Capacity {
    max: Int
    mid: Int
  }
  type Address {
    lines: [String!]!
    country: String
  }
  type Area {
    value: Float
    unit: String
  }
  # Free-form metadata of a room or zone (an object; null when none is kept). A comment, not a
  # description: the resolver map's scalar (resolvers.ts) replaces the SDL's, description included.
  scalar JSON
  type FloorPlan {
    floor_plan_id: ID!
    name: String!
    url: String
    "Outline vertices [x, y] in metres."
    coordinates: [[Float!]!]!
  }

  type Site {
    id: ID!
    name: String!
    timezone: String!
    siteNumber: String
    customID: String
    org_id: String!
    buildings: [Building!]!
  }

  type Building {
    id: ID!
    name: String!
    site_id: String!
    building_number: String
    buildingNumber: String
    capacity: Capacity
    address: Address
    customID: String
    floors: [Floor!]!
    site: Site!
  }

  type Floor {
    id: ID!
    floor_id: ID!
    client_id: String!
    name: String!
    building_id: String!
    floorNumber: Int
    timezone: String!
    installation_date: String
    customID: String
    capacity: Capacity
    area: Area
    rooms: [Room!]!
    zones: [Zone!]!
    sensors: [Sensor!]!
    hives: [Hive!]!
    tags: [Tag!]!
    building: Building
    installation_status: String!
    service_status: String!
    floor_plans: [FloorPlan!]!
    "The most recent battery change among the floor's battery sensors."
    last_battery_change_date: String
    "The soonest next battery change among the floor's battery sensors."
    next_battery_change_date: String
  }

  type Room {
    id: ID!
    room_id: ID!
    client_id: String!
    name: String!
    floor_id: String!
    floorID: String!
    floor: Floor
    roomType: String
    customID: String
    capacity: Capacity
    area: Area
    "Polygon vertices [x, y] in metres on the floor plan."
    coordinates: [[Float!]!]!
    note: String
    "Degrees, clockwise, of the room's axes on the floor plan."
    rotation: Float!
    metadata: JSON
    pir_zero_enable: Boolean
    pir_zero_threshold: Int
    pir_zero_window: Int
    sensors: [Sensor!]!
    tags: [Tag!]!
  }

  type Zone {
    id: ID!
    zone_id: ID!
    client_id: String!
    name: String!
    floor_id: String!
    floorID: String!
    room_id: String
    roomID: String
    floor: Floor
    room: Room
    customID: String
    capacity: Capacity
    area: Area
    coordinates: [[Float!]!]!
    "Degrees, clockwise, of the zone's axes on the floor plan."
    rotation: Float!
    note: String
    metadata: JSON
    sensors: [Sensor!]!
    tags: [Tag!]!
  }

  type Sensor {
    id: ID!
    sensor_id: ID!
    client_id: String!
    name: String!
    mac_address: String!
    mode: String!
    model: String!
    floor_id: String!
    floorID: String!
    room_id: String
    roomID: String
    floor: Floor
    room: Room
    hive_id: String!
    hive_serial: String!
    height: Float!
    center: [Float!]!
    orientation: Float!
    field_of_view: Float!
    effective_field_of_view: Float!
    sensitivity: Int!
    door_line: [[Float!]!]
    in_direction: String
    is_entrance: Boolean!
    is_online: Boolean!
    is_streaming: Boolean!
    power_type: String!
    last_battery_change_date: String
    next_battery_change_date: String
    battery_change_by_date: String
    "Battery charge in percent (0–100) from the newest health report; null for wired or never heard."
    battery_level: Float
    last_heartbeat: String
    installation_status: String!
    sensor_serial: String!
    "Traffic sensors: whether the sensor's orientation runs along its door line; null for presence sensors."
    parallel_to_door: Boolean
    note: String
    "Expected battery life in days (since the last change), from the battery's drain so far; null for wired or never heard."
    estimated_total_runtime_days: Float
    "When the sensor's newest packet or health report was sensed (ISO 8601 UTC)."
    last_raw_message: String
    "When the sensor's newest data packet (what occupancy is computed from) was sensed, ISO 8601 UTC; null when the newest thing heard from it was a health report."
    last_occupancy_message: String
  }

  type Hive {
    id: ID!
    hive_id: ID!
    client_id: String!
    name: String!
    serialNumber: String!
    serial_number: String!
    floor_id: String!
    floorID: String!
    room_id: String
    roomID: String
    floor: Floor
    isOnline: Boolean!
    isStreaming: Boolean!
    hiveVersion: String!
    hiveType: String!
    lastHeartbeat: String
    netPathStability: Float
    coordinates: [Float!]!
    installed: Boolean!
    note: String
  }

  type NamedRef {
    id: ID!
    name: String!
  }

  type Tag {
    id: ID!
    name: String!
    organization_id: String!
    rooms: [NamedRef!]!
    zones: [NamedRef!]!
    floors: [NamedRef!]!
  }

  """
  What associateTag and disassociateTag answer: the tag under \`tag\`, as the reference's clients
  select it (\`associateTag { tag { id } }\`), and the tag's own fields beside it, as clients of
  our earlier schema (where the mutation returned a Tag) select them.
  """
  type TagAssociationPayload {
    tag: Tag!
    id: ID!
    name: String!
    organization_id: String!
    rooms: [NamedRef!]!
    zones: [NamedRef!]!
    floors: [NamedRef!]!
  }

  type SiteList {
    data: [Site!]!
  }
  type BuildingList {
    data: [Building!]!
  }
  type FloorList {
    data: [Floor!]!
  }
  type RoomList {
    data: [Room!]!
  }
  type ZoneList {
    data: [Zone!]!
  }
  type HiveList {
    data: [Hive!]!
  }
  type SensorList {
    data: [Sensor!]!
  }

  # List arguments are [String!] as on the reference platform: its clients type their
  # variables that way, and GraphQL refuses a variable of another type (platform-reference §2).
  type Query {
    sites: SiteList!
    site(id: ID, customID: ID): Site
    buildings: BuildingList!
    building(id: ID, customID: ID): Building
    floors(ids: [String!]): FloorList!
    floor(id: ID, customID: ID): Floor
    floorsByTag(tagIDs: [String!]!, useOR: Boolean): FloorList!
    rooms(ids: [String!]): RoomList!
    room(id: ID, customID: ID): Room
    roomsByTag(tagIDs: [String!]!, useOR: Boolean): RoomList!
    zones(ids: [String!]): ZoneList!
    zone(id: ID, customID: ID): Zone
    zonesByTag(tagIDs: [String!]!, useOR: Boolean): ZoneList!
    "returnPlaceholders: accepted for compatibility; occusim keeps no placeholder hives."
    hives(ids: [String!], serial_numbers: [String!], returnPlaceholders: Boolean): HiveList!
    sensors(
      ids: [String!]
      mac_addresses: [String!]
      floor_ids: [String!]
      room_ids: [String!]
      hive_ids: [String!]
      hive_serials: [String!]
    ): SensorList!
    tags(ids: [String!]): [Tag!]!
  }

  input UpdateSiteInfoInput {
    id: ID!
    name: String
    customID: String
    siteNumber: String
  }
  type UpdateSitePayload {
    site: Site!
  }
  input UpdateBuildingInfoInput {
    id: ID!
    name: String
    customID: String
    buildingNumber: String
    capacityMax: Int
    capacityMid: Int
  }
  type UpdateBuildingPayload {
    building: Building!
  }
  input UpdateFloorInfoInput {
    id: ID!
    name: String
    customID: String
  }
  type UpdateFloorPayload {
    floor: Floor!
  }
  input UpdateSensorInput {
    sensor_id: ID!
    name: String!
  }
  input UpdateSpaceInput {
    id: ID!
    name: String
    customID: String
  }
  input CreateTagInput {
    name: String!
  }
  input TagAssociationInput {
    ids: [String!]!
    tag_id: ID!
  }

  input CreateFloorInput {
    building_id: ID!
    name: String!
    floorNumber: Int
    customID: String
    outline: [[Float!]!]
  }
  input CreateRoomInput {
    floor_id: ID!
    name: String!
    coordinates: [[Float!]!]!
    customID: String
    capacityMax: Int
    capacityMid: Int
  }
  input CreateZoneInput {
    floor_id: ID!
    room_id: ID
    name: String!
    coordinates: [[Float!]!]!
    customID: String
  }
  input CreateHiveInput {
    floor_id: ID!
    name: String!
    serial_number: String!
    coordinates: [Float!]
    hiveType: String
  }
  input CreateSensorInput {
    floor_id: ID!
    hive_id: ID!
    name: String!
    mode: String!
    model: String
    room_id: ID
    center: [Float!]!
    height: Float
    orientation: Float
    field_of_view: Float
    sensitivity: Int
    mac_address: String
  }

  type Mutation {
    createFloors(input: [CreateFloorInput!]!): [Floor!]!
    createRooms(input: [CreateRoomInput!]!): [Room!]!
    createZones(input: [CreateZoneInput!]!): [Zone!]!
    createHives(input: [CreateHiveInput!]!): [Hive!]!
    createSensors(input: [CreateSensorInput!]!): [Sensor!]!
    updateSiteInfo(input: UpdateSiteInfoInput!): UpdateSitePayload!
    updateBuildingInfo(input: UpdateBuildingInfoInput!): UpdateBuildingPayload!
    updateFloorInfo(input: UpdateFloorInfoInput!): UpdateFloorPayload!
    updateSensors(sensors: [UpdateSensorInput!]!): [Sensor!]!
    "Renames rooms (or sets their custom id): the next occupancy events carry the new values."
    updateRooms(input: [UpdateSpaceInput!]!): [Room!]!
    "Renames zones (or sets their custom id)."
    updateZones(input: [UpdateSpaceInput!]!): [Zone!]!
    "Operator-only (internal use): ordinary tokens get FORBIDDEN."
    deleteSensors(ids: [String!]): [Sensor!]!
    createTag(input: CreateTagInput!): Tag!
    associateTag(input: TagAssociationInput!): TagAssociationPayload!
    disassociateTag(input: TagAssociationInput!): TagAssociationPayload!
  }
  ${webhookTypeDefs}
`;
