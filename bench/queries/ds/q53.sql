-- TPC-DS Q53: quarterly store sales of some manufacturers that strayed from their average
-- order: 3, 2, 1 limit
SELECT *
FROM (SELECT i_manufact_id, sum(ss_sales_price) sum_sales,
             avg(sum(ss_sales_price)) OVER (PARTITION BY i_manufact_id) avg_quarterly_sales
      FROM item, store_sales, date_dim, store
      WHERE ss_item_sk = i_item_sk
        AND ss_sold_date_sk = d_date_sk
        AND ss_store_sk = s_store_sk
        AND d_month_seq IN (1200, 1201, 1202, 1203, 1204, 1205, 1206, 1207, 1208, 1209, 1210, 1211)
        AND ((i_category IN ('Books', 'Children', 'Electronics')
        AND i_class IN ('personal', 'portable', 'reference', 'self-help')
        AND i_brand IN ('scholaramalgamalg #7', 'scholaramalgamalg #9', 'exportiimporto #1', 'importoamalg #1'))
       OR (i_category IN ('Women', 'Music', 'Men')
           AND i_class IN ('accessories', 'classical', 'fragrances', 'pants')
           AND i_brand IN ('amalgimporto #1', 'edu packamalg #1', 'exportiimporto #1', 'importoamalg #1')))
      GROUP BY i_manufact_id, d_qoy) tmp1
WHERE CASE WHEN avg_quarterly_sales > 0 THEN abs(sum_sales - avg_quarterly_sales) / avg_quarterly_sales ELSE NULL END > 0.1
ORDER BY avg_quarterly_sales, sum_sales, i_manufact_id
LIMIT 100;
