-- TPC-DS Q20: catalog revenue of items in three categories over a month, as a share of their class's
-- order: 3, 4, 1, 2, 7 limit
SELECT i_item_id, i_item_desc, i_category, i_class, i_current_price, sum(cs_ext_sales_price) AS itemrevenue,
       sum(cs_ext_sales_price) * 100 / sum(sum(cs_ext_sales_price)) OVER (PARTITION BY i_class) AS revenueratio
FROM catalog_sales, item, date_dim
WHERE cs_item_sk = i_item_sk
  AND i_category IN ('Sports', 'Books', 'Home')
  AND cs_sold_date_sk = d_date_sk
  AND d_date BETWEEN CAST('1999-02-22' AS DATE) AND (CAST('1999-02-22' AS DATE) + INTERVAL 30 DAY)
GROUP BY i_item_id, i_item_desc, i_category, i_class, i_current_price
ORDER BY i_category, i_class, i_item_id, i_item_desc, revenueratio
LIMIT 100;
