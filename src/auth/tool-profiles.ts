/**
 * The MCP tool profiles (issue 23): `all`, every tool a key's scopes allow; `core`, the six most
 * sessions need (their tools are listed in src/mcp/server.ts). A request names one with `?tools=` on
 * the MCP URL; a key may carry a default (api_keys.tool_profile).
 */
export const TOOL_PROFILE_NAMES = ['all', 'core'] as const;
export type ToolProfileName = (typeof TOOL_PROFILE_NAMES)[number];
