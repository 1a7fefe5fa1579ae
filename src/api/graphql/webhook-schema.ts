/**
 * Webhook management of platform-reference §4, as an extension of the schema in schema.ts.
 * Inputs take the published names (`eventTypes`, `endpointConfig`), outputs the snake_case
 * fields the reference lists. `secret` is answered only by createWebhooks, once.
 */
export const webhookTypeDefs = /* GraphQL */ `
  # filters: JSON is the scalar declared in schema.ts (one declaration per schema).

  type WebhookApiKey {
    key: String!
    value: String!
  }
  type WebhookBasicAuth {
    username: String!
    password: String!
  }
  type WebhookEndpointConfig {
    url: String!
    "Seconds per attempt."
    http_timeout: Float!
    api_key: WebhookApiKey
    basic_auth: WebhookBasicAuth
  }
  type Webhook {
    id: ID!
    name: String!
    "Canonical spellings: the minute-aligned types as _1M (_1MIN is accepted on input)."
    event_types: [String!]!
    "ENABLED or DISABLED (by the user, or by the platform after failing too long; updateWebhooks re-enables)."
    status: String!
    filters: JSON
    send_on_value_change: Boolean!
    endpoint_config: WebhookEndpointConfig!
    "The whsec_ signing secret: only in createWebhooks' answer."
    secret: String
  }

  input WebhookApiKeyInput {
    key: String!
    value: String!
  }
  input WebhookBasicAuthInput {
    username: String!
    password: String!
  }
  input WebhookEndpointConfigInput {
    url: String!
    http_timeout: Float
    api_key: WebhookApiKeyInput
    basic_auth: WebhookBasicAuthInput
  }
  input WebhookCreateInput {
    name: String
    eventTypes: [String!]!
    endpointConfig: WebhookEndpointConfigInput!
    filters: JSON
    send_on_value_change: Boolean
    "A whsec_ secret; absent: one is generated and returned once."
    secret: String
  }
  input WebhookUpdateInput {
    id: ID!
    name: String
    eventTypes: [String!]
    endpointConfig: WebhookEndpointConfigInput
    filters: JSON
    send_on_value_change: Boolean
    status: String
    "Signs with this secret and the previous one until the next rotation."
    rotate_secret: String
  }

  extend type Query {
    webhooks: [Webhook!]!
  }

  extend type Mutation {
    createWebhooks(input: [WebhookCreateInput!]!): [Webhook!]
    updateWebhooks(input: [WebhookUpdateInput!]!): [Webhook!]
    deleteWebhooks(ids: [String!]!): Boolean!
  }
`;
