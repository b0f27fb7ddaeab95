"""The pipeline's steps, which the worker (memories.worker) runs on a job's text: parse (uploaded
documents and pictures to text, in a sandboxed child process), segment, extract (rules, or
extract_llm with a chat model), dedupe, the update engine (update, judge_llm) and supersede; with the
language, time and entity rules they use (language, timeparse, entities).
"""
