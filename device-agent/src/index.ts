export { startAgent, type Agent } from './agent.js';
export { loadAgentConfig, type AgentConfig } from './config.js';
