/** Says that replies come from the built-in mock model and how to configure a real one. */
export function MockModelBanner() {
  return (
    <div className="alert info" role="note" aria-label="No model configured">
      <strong>No model is configured</strong> — replies come from the built-in mock model, which only echoes your message. Set{' '}
      <code>MUNINN_MODEL_BASE_URL</code> (any OpenAI-compatible endpoint, e.g. <code>http://127.0.0.1:11434/v1</code> for Ollama),{' '}
      <code>MUNINN_MODEL</code> and, if needed, <code>MUNINN_MODEL_API_KEY</code>, or add a provider under <code>ai.providers</code> in{' '}
      <code>muninn.json</code>; then restart the server.
    </div>
  );
}
